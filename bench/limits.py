"""The memory-bandwidth limit of compare.py's batch-1 decoding cells.

At batch 1 a decoding step multiplies a few rows (1, or K for beam K) by every decoder weight and
the output layer: each weight is read from memory once per step and used for a handful of
products, so the step's time is bounded below by the bytes of those weights over the memory
bandwidth. The encoder's weights and the encoder-decoder attention's key/value projections are
read once per sentence. So, per output token,

    bytes/token = (step_weights x steps + sentence_weights x sentences) x bytes per weight / tokens

with steps = each sentence's output tokens + 1 (the step that gives eos), at most max_len, and
the fraction of the limit = tokens/s x bytes/token / bandwidth (STREAM's triad, bench_bandwidth,
measured in the same run). Biases, layer norms and int8's per-row scales (4 bytes per row of 512
or 2,048 one-byte weights) are left out: under 1% of the bytes. The KV cache a step reads (its
positions so far) is left out too: at most 32 positions x 6 layers x 2 x 512 floats = 0.4 MB,
against 104 MB of fp32 weights a step for the base model.
"""
import json
import os
import subprocess

BYTES_PER_WEIGHT = {"fp32": 4, "bf16": 2, "int8": 1}


def step_weights(c):
    """Weights a decoding step reads: per decoder layer the masked self-attention's W_q, W_k, W_v,
    W_o, the encoder-decoder attention's W_q and W_o, the feed-forward's W_1 and W_2; then the
    output layer."""
    d, f, L, V = c["d"], c["ff"], c["layers"], c["vocab"]
    return L * (6 * d * d + 2 * d * f) + V * d


def sentence_weights(c):
    """Weights read once per sentence: the encoder's layers, and each decoder layer's
    encoder-decoder W_k and W_v over the encoder's output."""
    d, f, L = c["d"], c["ff"], c["layers"]
    return L * (4 * d * d + 2 * d * f) + L * 2 * d * d


def bytes_per_token(c, out_lens, max_len, precision):
    steps = sum(min(n + 1, max_len) for n in out_lens)
    tokens = max(1, sum(out_lens))
    weights = step_weights(c) * steps + sentence_weights(c) * len(out_lens)
    return weights * BYTES_PER_WEIGHT[precision] / tokens


def measure_bandwidth(build, threads, env, read_only=None):
    """STREAM triad GB/s on `threads` threads (bench_bandwidth); 0 when the program is missing. With
    a list as read_only, the rate of reading alone in the same run (what batch-1 decoding does; 0
    from a bench_bandwidth that does not measure it) is appended to it."""
    exe = os.path.join(build, "bench_bandwidth")
    if not os.path.exists(exe):
        return 0.0
    p = subprocess.run([exe, "--threads", str(threads)], env=env, capture_output=True, text=True, check=True)
    result = json.loads(p.stdout.strip().splitlines()[-1])
    if read_only is not None:
        read_only.append(result.get("read_gb_s", 0.0))
    return result["triad_gb_s"]


def add_bandwidth_fractions(cells, bandwidth_gb_s):
    """cells[system + "_bw"] = its tokens/s x bytes/token / bandwidth for the systems the row names
    in "bw_systems" (those that run the model in the precision "bw_bytes_per_token" counts)."""
    if bandwidth_gb_s <= 0 or "bw_bytes_per_token" not in cells:
        return
    for name in cells["bw_systems"]:
        cells[name + "_bw"] = cells[name] * cells["bw_bytes_per_token"] / (bandwidth_gb_s * 1e9)
