#!/usr/bin/python3
"""Writes the small files that tests/io reads, into tests/fixtures/io/.

Run with Debian's /usr/bin/python3 (numpy). If the PyPI package `safetensors` is importable, it
also writes pylib.safetensors with the reference implementation.

    /usr/bin/python3 tests/io/make_io_fixtures.py

The values are simple formulas so the C++ tests can state them exactly:
  f32_2x3  = arange(6).reshape(2, 3) * 0.5 - 1        float32
  f64_4    = [0.1, -2.5, 1e10, 3.0]                   float64 (attn converts to float32)
  i64_2x2x2 = arange(8).reshape(2, 2, 2) * 2**40 - 3   int64
  i32_3    = [-7, 0, 2147483647]                      int32
  scalar   = 3.25                                      float32, shape ()
  empty_0x3 = zeros((0, 3))                            float32
  fortran_2x3 = asfortranarray(arange(6).reshape(2, 3) + 10)   float32, fortran_order True
  mask_4   = [True, False, False, True]                bool (attn reads as int32 0/1)
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "io")


def npz_arrays():
    return {
        "f32_2x3": (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1).astype(np.float32),
        "f64_4": np.array([0.1, -2.5, 1e10, 3.0], dtype=np.float64),
        "i64_2x2x2": np.arange(8, dtype=np.int64).reshape(2, 2, 2) * 2**40 - 3,
        "i32_3": np.array([-7, 0, 2147483647], dtype=np.int32),
        "scalar": np.array(3.25, dtype=np.float32),
        "empty_0x3": np.zeros((0, 3), dtype=np.float32),
        "fortran_2x3": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3) + 10),
        "mask_4": np.array([True, False, False, True]),
    }


def bf16_bits(values):
    """bfloat16 bit patterns by truncating float32 (exact for the values used here)."""
    return (np.array(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def write_safetensors_by_hand(path):
    """The format, written out from the spec: u64 header length, JSON header, data buffer."""
    tensors = [  # (name, dtype, shape, bytes), laid out in this order
        ("weight", "F32", [2, 3], (np.arange(6, dtype=np.float32) - 2.5).tobytes()),
        ("ids", "I64", [3], np.array([-1, 0, 2**40], dtype=np.int64).tobytes()),
        ("counts", "I32", [2, 2], np.array([[1, -2], [3, 2**31 - 1]], dtype=np.int32).tobytes()),
        ("half", "BF16", [4], bf16_bits([1.0, -2.0, 0.5, 256.0]).tobytes()),
        ("scale", "F32", [], np.array(0.125, dtype=np.float32).tobytes()),
        ("nothing", "F32", [0, 4], b""),
    ]
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "pt", "note": "written by hand"}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def write_safetensors_with_library(path):
    try:
        from safetensors.numpy import save_file
    except ImportError:
        print("safetensors not installed: keeping", path)
        return
    save_file({
        "encoder.w": np.arange(12, dtype=np.float32).reshape(3, 4) / 4,
        "encoder.b": np.array([-1.5, 2.5], dtype=np.float32),
        "steps": np.array([7, 8, 9], dtype=np.int64),
        "pos": np.array([[4, 5]], dtype=np.int32),
    }, path, metadata={"made_by": "safetensors.numpy"})


def main():
    os.makedirs(OUT, exist_ok=True)
    np.savez(os.path.join(OUT, "savez.npz"), **npz_arrays())
    np.savez_compressed(os.path.join(OUT, "savez_compressed.npz"), **npz_arrays())
    write_safetensors_by_hand(os.path.join(OUT, "hand.safetensors"))
    write_safetensors_with_library(os.path.join(OUT, "pylib.safetensors"))
    for name in sorted(os.listdir(OUT)):
        print(name, os.path.getsize(os.path.join(OUT, name)), "bytes")


if __name__ == "__main__":
    main()
