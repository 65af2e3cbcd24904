#!/usr/bin/python3
"""Loads an `attn export-torch` directory of an RNN model (model: rnn) into tests/rnn/torch_rnn.py's
RnnSeq2Seq with load_state_dict(strict=True) and checks that PyTorch's log-probabilities of random
sentence pairs equal `attn score --ids` on the attn model directory it was exported from.

  attn export-torch MODEL_DIR REF_DIR
  /usr/bin/python3 tests/rnn/check_export_torch.py --attn build/attn MODEL_DIR REF_DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_rnn import RnnSeq2Seq  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--attn", default="build/attn")
    p.add_argument("--pairs", type=int, default=8)
    p.add_argument("model_dir")
    p.add_argument("ref_dir")
    a = p.parse_args()
    with open(os.path.join(a.ref_dir, "config.json")) as f:
        c = json.load(f)
    model = RnnSeq2Seq(c)
    weights = np.load(os.path.join(a.ref_dir, "weights.npz"))
    model.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files}, strict=True)
    model.eval()
    gen = torch.Generator().manual_seed(1)
    V, pad, bos, eos = c["tgt_vocab"], c["pad_id"], c["bos_id"], c["eos_id"]
    srcs, tgts = [], []
    for _ in range(a.pairs):
        s = torch.randint(3, V, (int(torch.randint(2, 12, (1,), generator=gen)),), generator=gen).tolist()
        t = torch.randint(3, V, (int(torch.randint(1, 10, (1,), generator=gen)),), generator=gen).tolist()
        srcs.append(s + [eos])
        tgts.append(t)
    want = []
    with torch.no_grad():
        for s, t in zip(srcs, tgts):
            logits = model(torch.tensor([s]), torch.tensor([[bos] + t]))
            logp = F.log_softmax(logits[0], -1)
            want.append(float(logp[torch.arange(len(t) + 1), torch.tensor(t + [eos])].sum()))
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in (("src", srcs), ("tgt", tgts)):
            with open(os.path.join(tmp, name), "w") as f:
                f.write("".join(" ".join(map(str, r)) + "\n" for r in rows))
        out = subprocess.run([a.attn, "score", "--model", a.model_dir, "--ids", "--src", os.path.join(tmp, "src"),
                              "--tgt", os.path.join(tmp, "tgt"), "--threads", "1"],
                             capture_output=True, text=True, check=True)
    got = [float(x) for x in out.stdout.split()]
    diff = max(abs(x - y) / (1 + abs(y)) for x, y in zip(got, want))
    print(f"{len(want)} pairs: attn score vs torch_rnn.py log-prob, max |diff| / (1 + |torch|) {diff:.2e} "
          f"(tolerance 1e-4) {'ok' if diff <= 1e-4 else 'FAIL'}")
    sys.exit(0 if diff <= 1e-4 and len(got) == len(want) else 1)


if __name__ == "__main__":
    main()
