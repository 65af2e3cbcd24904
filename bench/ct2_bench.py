#!/work/venv-ct2/bin/python
"""CTranslate2 on the same model as bench_translate: converts a torch_ref.py model directory
(config.json + weights.npz) into a CTranslate2 model with its Python spec API, and times
translate_batch on a file of source ids.

  ct2_bench.py convert --model DIR --out CT2_DIR
  ct2_bench.py translate --model CT2_DIR --src IDS [--out IDS] [--beam K] [--batch B] [--max-len N]
                         [--threads N] [--compute-type float32|int8|bfloat16|int8_bfloat16]

Needs the ctranslate2 wheel (PyPI) in a venv, e.g. /usr/bin/python3 -m venv /work/venv-ct2 &&
/work/venv-ct2/bin/pip install ctranslate2. The model must be pre-LN (norm_first): CTranslate2's
post-norm Transformer has no final LayerNorm, while nn.Transformer's always has one. Our position
table (interleaved sin/cos) is given to the spec, so both compute the same function. Token i is
the string "<blank>", "<s>", "</s>" for ids 0, 1, 2 and "t<i>" otherwise.
Prints one JSON line.
"""
import argparse
import json
import os
import resource
import time

import numpy as np


SPECIALS = ["<blank>", "<s>", "</s>"]


def vocabulary(n):
    return SPECIALS + ["t%d" % i for i in range(3, n)]


def sinusoid_table(max_len, d):
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    angle = pos / np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)
    pe = np.zeros((max_len, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe.astype(np.float32)


def convert(a):
    import ctranslate2
    from ctranslate2.specs import common_spec, transformer_spec

    cfg = json.load(open(a.model + "/config.json"))
    w = dict(np.load(a.model + "/weights.npz"))
    assert cfg["norm_first"], "CTranslate2 needs a pre-LN model (see the docstring)"
    d = cfg["d_model"]
    spec = transformer_spec.TransformerSpec.from_config(
        (cfg["encoder_layers"], cfg["decoder_layers"]), cfg["heads"], pre_norm=True,
        activation=common_spec.Activation.RELU)
    spec.config.layer_norm_epsilon = 1e-5

    def linear(s, key, rows=None):
        s.weight = w[key + "weight"] if rows is None else w[key + "weight"][rows]
        s.bias = w[key + "bias"] if rows is None else w[key + "bias"][rows]

    def norm(s, key):
        s.gamma, s.beta = w[key + "weight"], w[key + "bias"]

    pe = sinusoid_table(cfg["max_len"], d)
    for stack, table in ((spec.encoder, "src_embed.weight"), (spec.decoder, "tgt_embed.weight")):
        emb = stack.embeddings[0] if isinstance(stack.embeddings, list) else stack.embeddings
        emb.weight = w[table]
        stack.scale_embeddings = True
        stack.position_encodings.encodings = pe
    for stack, name in ((spec.encoder, "encoder"), (spec.decoder, "decoder")):
        norm(stack.layer_norm, "transformer.%s.norm." % name)
        for i, layer in enumerate(stack.layer):
            k = "transformer.%s.layers.%d." % (name, i)
            # self-attention (norm1), the decoder's cross-attention (norm2), the FFN (last norm)
            linear(layer.self_attention.linear[0], k + "self_attn.in_proj_")
            linear(layer.self_attention.linear[1], k + "self_attn.out_proj.")
            norm(layer.self_attention.layer_norm, k + "norm1.")
            if name == "decoder":
                linear(layer.attention.linear[0], k + "multihead_attn.in_proj_", slice(0, d))
                linear(layer.attention.linear[1], k + "multihead_attn.in_proj_", slice(d, 3 * d))
                linear(layer.attention.linear[2], k + "multihead_attn.out_proj.")
                norm(layer.attention.layer_norm, k + "norm2.")
            linear(layer.ffn.linear_0, k + "linear1.")
            linear(layer.ffn.linear_1, k + "linear2.")
            norm(layer.ffn.layer_norm, k + ("norm3." if name == "decoder" else "norm2."))
    linear(spec.decoder.projection, "generator.")
    spec.register_source_vocabulary(vocabulary(cfg["src_vocab"]))
    spec.register_target_vocabulary(vocabulary(cfg["tgt_vocab"]))
    spec.validate()
    spec.optimize(quantization=None)
    os.makedirs(a.out, exist_ok=True)
    spec.save(a.out)
    print(json.dumps(dict(converted=a.out, ctranslate2=ctranslate2.__version__)))


def translate(a):
    import ctranslate2

    translator = ctranslate2.Translator(a.model, device="cpu", compute_type=a.compute_type,
                                        inter_threads=1, intra_threads=a.threads)
    sources = []
    for line in open(a.src):
        sources.append([SPECIALS[int(t)] if int(t) < 3 else "t" + t for t in line.split()])
    seconds = None
    for _ in range(a.repeat):  # the best of the repeats, as bench_translate --repeat reports
        outputs = []
        t0 = time.perf_counter()
        for first in range(0, len(sources), a.batch):
            results = translator.translate_batch(
                sources[first:first + a.batch], beam_size=a.beam, max_batch_size=a.batch,
                max_decoding_length=a.max_len, length_penalty=a.alpha, return_scores=False)
            outputs += [r.hypotheses[0] for r in results]
        elapsed = time.perf_counter() - t0
        seconds = elapsed if seconds is None else min(seconds, elapsed)
    ids = [[int(t[1:]) if t.startswith("t") else SPECIALS.index(t) for t in o] for o in outputs]
    tokens = sum(len(o) for o in ids)
    if a.out:
        with open(a.out, "w") as f:
            for o in ids:
                f.write(" ".join(map(str, o)) + "\n")
    print(json.dumps(dict(system="ct2", compute_type=a.compute_type, beam=a.beam, batch=a.batch, threads=a.threads,
                          tokens_per_s=tokens / seconds, seconds=seconds, tokens=tokens,
                          peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["convert", "translate"])
    p.add_argument("--model", required=True); p.add_argument("--out"); p.add_argument("--src")
    p.add_argument("--beam", type=int, default=1); p.add_argument("--batch", type=int, default=1)
    p.add_argument("--max-len", type=int, default=32); p.add_argument("--alpha", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=2); p.add_argument("--compute-type", default="float32")
    p.add_argument("--repeat", type=int, default=1, help="translate the sources this many times; the best time counts")
    a = p.parse_args()
    convert(a) if a.cmd == "convert" else translate(a)


if __name__ == "__main__":
    main()
