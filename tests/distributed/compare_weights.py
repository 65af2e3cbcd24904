"""The largest |a - b| over every weight of two model.safetensors files, read here by hand (8-byte
header length, JSON header, raw little-endian data) so that the comparison shares no code with attn.

    compare_weights.py A/model.safetensors B/model.safetensors [--label NAME] [--exact]

Fails (exit 1) when the names or shapes differ, or when max |a - b| > 1e-5 max |a| (fp32 rounding
of a reordered sum, grown by 50 Adam steps, stays far below); with --exact, when any bit differs.
Attention's key bias (the middle third of in_proj_bias) is left out as in data_parallel_test.cpp:
its exact gradient is zero, so what it receives is rounding noise that Adam magnifies to steps of
about lr; it moves no other weight.
"""
import argparse
import json
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            sys.exit(f"{path}: {name} is {t['dtype']}, expected F32")
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(t["shape"])
    return out


def without_key_bias(name, w):
    w = w.reshape(-1).astype(np.float64)
    if name.endswith("in_proj_bias"):
        n = w.size
        w = np.concatenate([w[: n // 3], w[2 * n // 3:]])
    return w


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--label", default="weights")
    p.add_argument("--exact", action="store_true")
    args = p.parse_args()
    a, b = read_safetensors(args.a), read_safetensors(args.b)
    if sorted(a) != sorted(b):
        sys.exit(f"different tensors: {sorted(set(a) ^ set(b))}")
    diff = scale = 0.0
    identical = True
    for name in sorted(a):
        if a[name].shape != b[name].shape:
            sys.exit(f"{name}: shape {a[name].shape} vs {b[name].shape}")
        identical = identical and a[name].tobytes() == b[name].tobytes()
        x, y = without_key_bias(name, a[name]), without_key_bias(name, b[name])
        diff = max(diff, float(np.max(np.abs(x - y))) if x.size else 0.0)
        scale = max(scale, float(np.max(np.abs(a[name]))) if a[name].size else 0.0)
    print(f"{args.label}: max |a - b| = {diff:.3g} (max |w| {scale:.3g}), {len(a)} tensors, "
          f"{'bit-identical' if identical else 'not bit-identical'}")
    if args.exact and not identical:
        sys.exit(1)
    if diff > 1e-5 * scale:
        sys.exit(1)


if __name__ == "__main__":
    main()
