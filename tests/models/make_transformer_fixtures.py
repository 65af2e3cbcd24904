#!/usr/bin/python3
"""Makes the committed Transformer fixtures with ../shared/reference/torch_ref.py (Debian's torch):
for each configuration, a model trained 300 steps on the reversal task (config.json + weights.npz),
source id files, and torch_ref.py's own outputs: logits, greedy, beam (4, alpha 0.6) and score.
    /usr/bin/python3 tests/models/make_transformer_fixtures.py
"""
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "transformer"))
REF = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference", "torch_ref.py"))

CONFIGS = {  # name: torch_ref.py make flags
    "post_shared_l2_h4": ["--layers", "2", "--heads", "4", "--src-vocab", "48", "--tgt-vocab", "48"],
    "pre_unshared_l1_h1": ["--layers", "1", "--heads", "1", "--norm-first", "--no-share",
                           "--src-vocab", "44", "--tgt-vocab", "52", "--d-model", "32", "--ff", "64"],
    "post_unshared_l3_h8": ["--layers", "3", "--heads", "8", "--no-share", "--src-vocab", "50",
                            "--tgt-vocab", "46", "--seed", "3"],
    "pre_shared_l3_h2": ["--layers", "3", "--heads", "2", "--norm-first", "--src-vocab", "48",
                         "--tgt-vocab", "48", "--d-model", "48", "--ff", "96", "--seed", "5"],
}


def run(*args, out=None):
    r = subprocess.run([sys.executable, REF, *args], check=True, capture_output=True, text=True)
    if out:
        with open(out, "w") as f:
            f.write(r.stdout)
    return r.stdout


def main():
    rnd = random.Random(0)
    for name, flags in CONFIGS.items():
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        run("make", "--out", d, "--train-steps", "300", *flags)
        # Sources: the training task (ids 3..39 then eos), plus off-task ones with repeats, so
        # that greedy and beam outputs are varied and beam sometimes differs from greedy.
        src, tgt = [], []
        for i in range(24):
            n = rnd.randint(1, 12)
            body = [rnd.randint(3, 39) for _ in range(n)]
            if i % 3 == 2:
                body = body[: n // 2 + 1] * 2
            src.append(" ".join(map(str, body + [2])))
            tgt.append(" ".join(map(str, body[::-1] if i % 4 else body)))
        with open(os.path.join(d, "src.txt"), "w") as f:
            f.write("\n".join(src) + "\n")
        with open(os.path.join(d, "tgt.txt"), "w") as f:
            f.write("\n".join(tgt) + "\n")
        s = os.path.join(d, "src.txt")
        run("greedy", "--model", d, "--src-file", s, "--max-len", "20", out=os.path.join(d, "greedy.txt"))
        run("beam", "--model", d, "--src-file", s, "--beam", "4", "--alpha", "0.6", "--max-len", "20",
            out=os.path.join(d, "beam4.txt"))
        run("beam", "--model", d, "--src-file", s, "--beam", "3", "--alpha", "0", "--max-len", "20",
            out=os.path.join(d, "beam3_a0.txt"))
        run("score", "--model", d, "--src-file", s, "--tgt-file", os.path.join(d, "tgt.txt"),
            out=os.path.join(d, "score.txt"))
        run("logits", "--model", d, "--src", src[5], "--tgt", "1 " + tgt[5], out=os.path.join(d, "logits.txt"))
        with open(os.path.join(d, "logits_input.txt"), "w") as f:
            f.write(src[5] + "\n1 " + tgt[5] + "\n")
        print("made", name, file=sys.stderr)


if __name__ == "__main__":
    main()
