#!/usr/bin/python3
"""One training step, and the first Adam steps, of torch_ref.py's model in PyTorch, for attn to
match: tests/fixtures/training/<config>/ holds the initial model (config.json + weights.npz),
a padded batch, the label-smoothed loss, every parameter's gradient, and the losses of 5 Adam steps.
    /usr/bin/python3 tests/models/make_training_fixtures.py
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "training"))
REF_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference"))
sys.path.insert(0, REF_DIR)
sys.path.insert(0, os.path.join(HERE, "..", "ops"))
import torch_ref  # noqa: E402
from make_op_fixtures import save_safetensors  # noqa: E402

CONFIGS = {
    "post_tied": ["--layers", "2", "--heads", "4", "--src-vocab", "40", "--tgt-vocab", "40",
                  "--d-model", "32", "--ff", "64"],
    "pre_untied": ["--layers", "2", "--heads", "2", "--norm-first", "--no-share", "--src-vocab", "36",
                   "--tgt-vocab", "44", "--d-model", "32", "--ff", "48", "--seed", "1"],
}
LABEL_SMOOTHING, LR, STEPS = 0.1, 1e-3, 5


def batch(cfg, g):
    """Padded batch of 6 pairs: src ids + eos, decoder input bos + tgt, output tgt + eos."""
    B, pad, bos, eos = 6, cfg["pad_id"], cfg["bos_id"], cfg["eos_id"]
    src = torch.full((B, 9), pad); tin = torch.full((B, 8), pad); tout = torch.full((B, 8), pad)
    for b in range(B):
        n, m = int(torch.randint(2, 9, (1,), generator=g)), int(torch.randint(1, 8, (1,), generator=g))
        src[b, :n] = torch.randint(3, cfg["src_vocab"], (n,), generator=g); src[b, n] = eos
        y = torch.randint(3, cfg["tgt_vocab"], (m,), generator=g)
        tin[b, 0] = bos; tin[b, 1:m + 1] = y
        tout[b, :m] = y; tout[b, m] = eos
    return src, tin, tout


def main():
    for name, flags in CONFIGS.items():
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(REF_DIR, "torch_ref.py"), "make", "--out", d, *flags],
                       check=True, capture_output=True)
        cfg = json.load(open(os.path.join(d, "config.json")))
        cfg["dropout"] = 0.0
        json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
        model = torch_ref.load(d)
        model.train()
        torch.set_num_threads(1)
        src, tin, tout = batch(cfg, torch.Generator().manual_seed(7))
        loss_fn = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING, ignore_index=cfg["pad_id"])

        def step_loss():
            memory, pad = model.encode(src)
            logp = model.decode(tin, memory, pad)
            return loss_fn(logp.reshape(-1, logp.shape[-1]), tout.reshape(-1))

        loss = step_loss()
        loss.backward()
        tensors = {"src": src.numpy().astype(np.int32), "tgt_in": tin.numpy().astype(np.int32),
                   "tgt_out": tout.numpy().astype(np.int32), "loss": np.array(loss.item(), dtype=np.float32)}
        for k, p in model.named_parameters():
            tensors["grad." + k] = p.grad.numpy().astype(np.float32)
        opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.98), eps=1e-9)
        model.zero_grad()
        losses = []
        for _ in range(STEPS):
            opt.zero_grad()
            loss = step_loss()
            losses.append(loss.item())
            loss.backward()
            opt.step()
        tensors["adam_losses"] = np.array(losses, dtype=np.float32)
        save_safetensors(os.path.join(d, "step.safetensors"), tensors)
        print(name, "loss", tensors["loss"], "adam", losses, file=sys.stderr)


if __name__ == "__main__":
    main()
