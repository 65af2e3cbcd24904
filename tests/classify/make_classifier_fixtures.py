"""Writes tests/fixtures/classify/<case>.npz: a small classifier's parameters (p.<key>), input ids,
labels, logits, cross-entropy loss and every parameter gradient (g.<key>) under attn's keys, and
cases.json with each case's configuration. Run: /usr/bin/python3 tests/classify/make_classifier_fixtures.py"""
import json, os
import numpy as np
import torch
import torch.nn.functional as F
from torch_classifier import Classifier, attn_state_dict

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "classify")
BASE = dict(vocab=20, classes=3, pad_size=6, d_model=12, heads=3, layers=2, d_ff=16, dropout=0.0)
CASES = {
    "seed_flatten": dict(pooling="flatten", mask=False, head_split="seed"),
    "standard_flatten": dict(pooling="flatten", mask=False, head_split="standard"),
    "mask_mean": dict(pooling="mean", mask=True, head_split="standard"),
    "nomask_mean": dict(pooling="mean", mask=False, head_split="standard"),
    "mask_cls": dict(pooling="cls", mask=True, head_split="standard"),
}


def main():
    torch.set_default_dtype(torch.float64)  # references in double, stored as float32
    os.makedirs(OUT, exist_ok=True)
    configs = {}
    for i, (name, extra) in enumerate(CASES.items()):
        c = dict(BASE, **extra)
        configs[name] = c
        torch.manual_seed(100 + i)
        m = Classifier(c)
        with torch.no_grad():  # round parameters to float32 so both sides start equal
            for p in m.parameters():
                p.copy_(p.float().double())
        lengths = [6, 3, 5, 1]
        ids = torch.zeros(4, 6, dtype=torch.long)
        for r, n in enumerate(lengths):
            ids[r, :n] = torch.randint(3, 20, (n,))
            if extra["pooling"] == "cls":
                ids[r, 0] = 2
        y = torch.tensor([0, 2, 1, 2])
        logits = m(ids)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        arrays = {"ids": ids.int().numpy(), "labels": y.int().numpy(),
                  "logits": logits.detach().float().numpy(), "loss": np.array(loss.item(), dtype=np.float32)}
        for k, v in attn_state_dict(m)(lambda t: t.detach()).items():
            arrays["p." + k] = v.float().numpy()
        for k, v in attn_state_dict(m)(lambda t: t.grad).items():
            arrays["g." + k] = v.float().numpy()
        np.savez(os.path.join(OUT, name + ".npz"), **arrays)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(configs, f, indent=1)
    write_seed_embeddings()


def write_seed_embeddings():
    """A pre-trained table as seed 002 writes embedding_SougouNews.npz: np.savez_compressed of a
    float64 array under the key "embeddings" (values k/8, exact in float32)."""
    np.savez_compressed(os.path.join(OUT, "embeddings_seed_style.npz"),
                        embeddings=np.arange(15, dtype=np.float64).reshape(5, 3) / 8.0)


if __name__ == "__main__":
    main()
