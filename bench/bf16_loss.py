#!/usr/bin/python3
"""bf16 mixed-precision training against fp32 on the real corpus: dev loss after the same steps.

  /usr/bin/python3 bench/bf16_loss.py [--build build] [--bf16-steps 300] [--bf16-validate-every 100]
        [--threads 2] [--work /tmp/attn-bf16-loss]

Trains attn's default translation configuration (`attn train` without a config: d_model 256, 3+3
layers, 2048-token batches, the shipped English->German corpus, which scripts/data.sh unpacks) twice
from the same seed, on the same SentencePiece model and the same batches: once with --precision fp32
and once with --precision bf16 (bf16 products with f32 accumulation; master weights, gradients, Adam,
norms and loss in f32; validation in fp32 in both). Prints, at every validation, the dev loss of
both (NLL per target token over the whole dev set) and bf16's relative difference, and the training
throughput of each. The project's goal: bf16's dev loss within 1% of fp32's after the same steps.
The last line is JSON: {"steps", "fp32_dev_nll", "bf16_dev_nll", "rel_diff", "fp32_tok_s", "bf16_tok_s"}.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def train(attn, precision, model_dir, a, env, tokenizer=None):
    """One `attn train` run; returns its train_log.jsonl records."""
    shutil.rmtree(model_dir, ignore_errors=True)
    cmd = [attn, "train", "--max-steps", str(a.steps), "--threads", str(a.threads), "--precision", precision,
           "--model-dir", model_dir, "--set", "train.validate_every=%d" % a.validate_every,
           "--set", "train.valid_sentences=%d" % a.valid_sentences, "--set", "train.log_every=%d" % a.log_every,
           "--set", "train.checkpoint_minutes=0", "--set", "train.seed=%d" % a.seed]
    if tokenizer:
        cmd += ["--set", "data.tokenizer=" + tokenizer]
    print("  " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    with open(os.path.join(model_dir, "train_log.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def throughput(records):
    """Target tokens per second over the logged training intervals after the first (which holds start-up)."""
    rates = [r["tgt_tokens_per_s"] for r in records if r.get("event") == "train"]
    rates = rates[1:] or rates
    return sum(rates) / len(rates) if rates else float("nan")


def compare(a, env, work):
    """Runs both precisions in `work`; returns the summary dict (and prints the table to stdout)."""
    attn = os.path.abspath(os.path.join(a.build, "attn"))
    if not os.path.exists(os.path.join(REPO, "data", "mt-ende", "train.en")):
        subprocess.run(["bash", os.path.join(REPO, "scripts", "data.sh")], cwd=REPO, check=True)
    fp32_dir, bf16_dir = os.path.join(work, "fp32"), os.path.join(work, "bf16")
    fp32 = train(attn, "fp32", fp32_dir, a, env)
    bf16 = train(attn, "bf16", bf16_dir, a, env, tokenizer=os.path.join(fp32_dir, "spm.model"))
    valid = lambda rs: {r["step"]: r["dev_nll"] for r in rs if r.get("event") == "valid"}  # noqa: E731
    v32, v16 = valid(fp32), valid(bf16)
    steps = sorted(set(v32) & set(v16))
    if not steps:
        sys.exit("bf16_loss: no validation in common (fp32 at %s, bf16 at %s)" % (sorted(v32), sorted(v16)))
    print("\nbf16 mixed precision against fp32, attn train defaults, %d steps, seed %d, %d threads"
          % (a.steps, a.seed, a.threads))
    print("| step | fp32 dev loss | bf16 dev loss | bf16 - fp32 (relative) |")
    print("|---|---|---|---|")
    for s in steps:
        print("| %d | %.4f | %.4f | %+.3f%% |" % (s, v32[s], v16[s], 100 * (v16[s] - v32[s]) / v32[s]))
    last = steps[-1]
    out = {"steps": last, "fp32_dev_nll": v32[last], "bf16_dev_nll": v16[last],
           "rel_diff": (v16[last] - v32[last]) / v32[last],
           "fp32_tok_s": throughput(fp32), "bf16_tok_s": throughput(bf16)}
    print("training tgt tok/s (logged intervals after the first): fp32 %.0f, bf16 %.0f (%.2fx)"
          % (out["fp32_tok_s"], out["bf16_tok_s"], out["bf16_tok_s"] / out["fp32_tok_s"]))
    return out


def add_arguments(p):
    """The options of this benchmark, also taken by bench/compare.py."""
    p.add_argument("--bf16-steps", dest="steps", type=int, default=300, help="optimizer steps of each run")
    p.add_argument("--bf16-validate-every", dest="validate_every", type=int, default=100)
    p.add_argument("--bf16-valid-sentences", dest="valid_sentences", type=int, default=100,
                   help="dev sentences translated for BLEU at each validation (the dev loss covers them all)")
    p.add_argument("--bf16-log-every", dest="log_every", type=int, default=25)
    p.add_argument("--bf16-seed", dest="seed", type=int, default=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--work", default="/tmp/attn-bf16-loss")
    add_arguments(p)
    a = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    print(json.dumps(compare(a, env, os.path.abspath(a.work))))


if __name__ == "__main__":
    main()
