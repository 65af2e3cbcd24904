#!/usr/bin/python3
"""Writes the PyTorch fixtures the op tests compare attn with: tests/fixtures/ops/<op>.safetensors.

Each file holds the op's inputs (in0, in1, ...), its output (out), a random upstream gradient
(dout) and PyTorch's gradients of sum(out * dout) with respect to each float input (grad0, ...).
Integer inputs (ids, targets, masks) are stored as I32. Run with Debian's torch:
    /usr/bin/python3 tests/ops/make_op_fixtures.py
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ops")


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        arr = np.array(arr, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        dtype = {np.float32: "F32", np.int32: "I32"}[arr.dtype.type]
        data = arr.tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def rand(gen, *shape, scale=1.0):
    return ((torch.rand(*shape, generator=gen) * 2 - 1) * scale).requires_grad_(True)


def fixture(name, fn, inputs, seed=0):
    """inputs: list of tensors; float ones that require grad get gradients."""
    out = fn(*inputs)
    gen = torch.Generator().manual_seed(1000 + seed)
    dout = torch.rand(out.shape, generator=gen) * 2 - 1
    floats = [t for t in inputs if t.dtype == torch.float32 and t.requires_grad]
    grads = torch.autograd.grad(out, floats, dout, allow_unused=True) if floats else []
    tensors = {}
    for i, t in enumerate(inputs):
        tensors[f"in{i}"] = t.detach().numpy().astype(np.int32 if not t.dtype.is_floating_point else np.float32)
    tensors["out"] = out.detach().numpy().astype(np.float32)
    tensors["dout"] = dout.numpy().astype(np.float32)
    gi = 0
    for i, t in enumerate(inputs):
        if t.dtype == torch.float32 and t.requires_grad:
            g = grads[gi]
            gi += 1
            tensors[f"grad{i}"] = (g if g is not None else torch.zeros_like(t)).numpy().astype(np.float32)
    save_safetensors(os.path.join(OUT, name + ".safetensors"), tensors)


def attention(q, k, v, pad=None, causal=False):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if pad is not None:
        s = s.masked_fill(pad.bool()[:, None, None, :], float("-inf"))
    if causal:
        n, m = s.shape[-2], s.shape[-1]
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1 + m - n), float("-inf"))
    return torch.softmax(s, -1) @ v


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    a, b = rand(g, 2, 3, 4), rand(g, 3, 1)
    pos = (torch.rand(3, 1, generator=g) + 0.5).requires_grad_(True)
    fixture("add", torch.add, [a, b])
    fixture("sub", torch.sub, [a, b])
    fixture("mul", torch.mul, [a, b])
    fixture("div", torch.div, [a, pos])
    fixture("scale", lambda x: x * -2.5, [a])
    x = rand(g, 4, 9, scale=3.0)
    fixture("relu", F.relu, [x])
    fixture("gelu", F.gelu, [x])
    fixture("tanh", torch.tanh, [x])
    fixture("sigmoid", torch.sigmoid, [x])
    fixture("swish", F.silu, [x])
    mask = torch.tensor([[[0, 1, 0, 0]], [[0, 1, 1, 0]]], dtype=torch.int32)
    fixture("masked_fill", lambda x, m: x.masked_fill(m.bool(), -3.0), [a, mask])
    for ta in (False, True):
        for tb in (False, True):
            tag = ("T" if ta else "N") + ("T" if tb else "N")
            A = rand(g, *((3, 8, 5) if ta else (3, 5, 8)))
            B = rand(g, *((3, 6, 8) if tb else (3, 8, 6)))
            B2 = rand(g, *((6, 8) if tb else (8, 6)))
            op = lambda X, Y, ta=ta, tb=tb: (X.transpose(-1, -2) if ta else X) @ (Y.transpose(-1, -2) if tb else Y)
            fixture("matmul_batched_" + tag, op, [A, B])
            fixture("matmul_shared_" + tag, op, [A, B2])
    fixture("linear", F.linear, [rand(g, 2, 5, 8), rand(g, 6, 8), rand(g, 6)])
    s = rand(g, 5, 11, scale=4.0)
    fixture("softmax", lambda x: torch.softmax(x, -1), [s])
    fixture("log_softmax", lambda x: torch.log_softmax(x, -1), [s])
    ln_in = rand(g, 3, 4, 16, scale=2.0)
    fixture("layer_norm", lambda x, w, b: F.layer_norm(x, (16,), w, b, 1e-5),
            [ln_in, (1 + 0.1 * rand(g, 16)).detach().requires_grad_(True), rand(g, 16)])
    ids = torch.tensor([[1, 4, 1], [6, 0, 4]], dtype=torch.int32)
    fixture("embedding", lambda t, i: F.embedding(i.long(), t), [rand(g, 7, 5), ids])
    fixture("reshape", lambda x: x.reshape(6, -1), [a])
    fixture("transpose", lambda x: x.transpose(0, 2), [a])
    fixture("slice", lambda x: x[:, 1:3], [a])
    fixture("concat", lambda x, y: torch.cat([x, y], 1), [a, rand(g, 2, 2, 4)])
    fixture("split", lambda x: torch.cat([torch.split(x, [1, 2], 1)[1] * 2, torch.split(x, [1, 2], 1)[0]], 1), [a])
    fixture("sum", lambda x: x.sum(), [a])
    fixture("mean", lambda x: x.mean(), [a])
    fixture("sum_dim1", lambda x: x.sum(1), [a])
    fixture("mean_dim_last_keep", lambda x: x.mean(-1, keepdim=True), [a])
    logits = rand(g, 9, 13, scale=3.0)
    tgt = torch.tensor([3, 0, 12, 0, 2, 7, 7, 1, 0], dtype=torch.int32)
    fixture("cross_entropy", lambda z, t: F.cross_entropy(z, t.long()), [logits, tgt])
    fixture("cross_entropy_smooth_ignore",
            lambda z, t: torch.nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0)(z, t.long()), [logits, tgt])
    q, k, v = rand(g, 2, 4, 7, 16), rand(g, 2, 4, 9, 16), rand(g, 2, 4, 9, 8)
    pad = torch.tensor([[0] * 9, [0] * 6 + [1] * 3], dtype=torch.int32)
    fixture("attention_padding", lambda q, k, v, p: attention(q, k, v, p), [q, k, v, pad])
    qs = rand(g, 2, 4, 9, 16)
    fixture("attention_causal", lambda q, k, v: attention(q, k, v, causal=True), [qs, k, v])
    fixture("attention_causal_padding", lambda q, k, v, p: attention(q, k, v, p, causal=True), [qs, k, v, pad])
    print("wrote", len(os.listdir(OUT)), "fixtures to", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
