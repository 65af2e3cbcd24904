#!/work/venv-ct2/bin/python
"""attn's Python module against the attn binary and against CTranslate2, on the same model and
the same sentences.

  bench/python_bench.py [--work /tmp/attn_pybench] [--beam 4] [--batch 32] [--max-len 32] [--threads 2]
                        [--sentences 128] [--repeat 3]

The model is compare.py's: a torch_ref.py base Transformer (d_model 512, 6+6 layers, pre-LN,
vocabularies of 8000, seed 0, random weights), imported with `attn import-torch` and converted for
CTranslate2 with ct2_bench.py (the same weights). The sentences are random ids (8 .. 30 tokens +
eos, seed 3), fed as ids by all three (the binary's --ids). Times, the best of --repeat each:
  - attn.Translator.translate_batch on the list (the model loaded once, before timing);
  - `attn translate --ids` on the same lines in a file, minus the same command's time on an empty
    file (its model loading), so both count only the translation;
  - ctranslate2.Translator.translate_batch (compute_type float32, intra_threads = --threads).
Run it with the CTranslate2 venv's Python (/work/venv-ct2, --system-site-packages, so Debian's numpy
and torch are there) and PYTHONPATH=build/python. Prints one JSON line per system and the ratios.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ATTN = os.path.join(REPO, "build", "attn")


def prepare(a):
    os.makedirs(a.work, exist_ok=True)
    ref = os.path.join(a.work, "base_pre_ln")
    if not os.path.exists(os.path.join(ref, "weights.npz")):
        subprocess.run(["/usr/bin/python3", os.path.join(REPO, "..", "shared", "reference", "torch_ref.py"), "make",
                        "--out", ref, "--seed", "0", "--src-vocab", "8000", "--tgt-vocab", "8000", "--d-model", "512",
                        "--heads", "8", "--layers", "6", "--ff", "2048", "--norm-first", "--no-share"], check=True)
    model = os.path.join(a.work, "base_attn")
    if not os.path.exists(os.path.join(model, "model.safetensors")):
        subprocess.run([ATTN, "import-torch", ref, model], check=True)
    ct2 = os.path.join(a.work, "base_ct2")
    if not os.path.exists(os.path.join(ct2, "model.bin")):
        subprocess.run([sys.executable, os.path.join(HERE, "ct2_bench.py"), "convert", "--model", ref, "--out", ct2],
                       check=True)
    rng = random.Random(3)
    sources = [[rng.randrange(3, 8000) for _ in range(rng.randrange(8, 31))] + [2] for _ in range(a.sentences)]
    path = os.path.join(a.work, "src.ids")
    with open(path, "w") as f:
        f.writelines(" ".join(map(str, s)) + "\n" for s in sources)
    open(os.path.join(a.work, "empty.ids"), "w").close()
    return model, ct2, sources, path


def best_of(repeat, work):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - t0)
    return min(times), out


def bench_python(a, model, sources):
    import attn
    t = attn.Translator(model, threads=a.threads)
    seconds, results = best_of(a.repeat, lambda: t.translate_batch(
        sources, beam_size=a.beam, max_batch_size=a.batch, max_decoding_length=a.max_len, length_penalty=0.6))
    return seconds, [r.hypotheses[0] for r in results]


def bench_cli(a, model, path):
    flags = ["--ids", "--beam", str(a.beam), "--batch", str(a.batch), "--max-len", str(a.max_len),
             "--threads", str(a.threads)]

    def run(p):
        return subprocess.run([ATTN, "translate", "--model", model, *flags, "--input", p], capture_output=True,
                              text=True, check=True).stdout
    load, _ = best_of(a.repeat, lambda: run(os.path.join(a.work, "empty.ids")))
    total, out = best_of(a.repeat, lambda: run(path))
    return total - load, load, [list(map(int, line.split())) for line in out.splitlines()]


def bench_ct2(a, ct2, sources):
    import ctranslate2
    specials = ["<blank>", "<s>", "</s>"]
    tokens = [[specials[i] if i < 3 else "t%d" % i for i in s] for s in sources]
    t = ctranslate2.Translator(ct2, device="cpu", compute_type="float32", inter_threads=1, intra_threads=a.threads)
    seconds, results = best_of(a.repeat, lambda: t.translate_batch(
        tokens, beam_size=a.beam, max_batch_size=a.batch, max_decoding_length=a.max_len, length_penalty=0.6))
    ids = [[int(x[1:]) if x.startswith("t") else specials.index(x) for x in r.hypotheses[0]] for r in results]
    return seconds, ids, ctranslate2.__version__


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", default="/tmp/attn_pybench")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--max-len", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--sentences", type=int, default=128)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    model, ct2, sources, path = prepare(a)
    py_s, py_out = bench_python(a, model, sources)
    cli_s, load_s, cli_out = bench_cli(a, model, path)
    tokens = sum(len(o) for o in py_out)
    rows = [dict(system="attn.Translator.translate_batch", seconds=py_s, tokens_per_s=tokens / py_s),
            dict(system="attn translate (load %.2f s subtracted)" % load_s, seconds=cli_s, tokens_per_s=tokens / cli_s,
                 same_output=cli_out == py_out)]
    try:
        ct_s, ct_out, version = bench_ct2(a, ct2, sources)
        same = sum(x == y for x, y in zip(ct_out, py_out))
        rows.append(dict(system="ctranslate2 %s translate_batch" % version, seconds=ct_s,
                         tokens_per_s=sum(len(o) for o in ct_out) / ct_s, same_output_sentences=f"{same}/{len(py_out)}"))
    except ImportError:
        rows.append(dict(system="ctranslate2", skipped="not installed (scripts/setup.sh --bench)"))
    for r in rows:
        print(json.dumps(dict(r, beam=a.beam, batch=a.batch, max_len=a.max_len, threads=a.threads,
                              sentences=len(sources))))
    print(json.dumps(dict(python_over_cli_speed=cli_s / py_s, python_over_ct2_speed=(ct_s / py_s) if len(rows) > 2 and
                          "seconds" in rows[2] else None)))


if __name__ == "__main__":
    main()
