"""Accuracy of an average of attn classifiers: each model directory's class probabilities
(`attn classify --top-k <all labels>`) on a label<TAB>text file, averaged over the models, the
most probable label taken (Hansen & Salamon 1990; models differing only in train.seed). Prints
each model's accuracy and the average's.

  /usr/bin/python3 bench/classifier_ensemble.py --attn build/attn --data ../shared/data/cls-en-brown/dev.tsv \
      runs/brown-s1 runs/brown-s2 runs/brown-s3"""
import argparse, json, os, subprocess, sys


def probabilities(attn, model, texts, threads):
    labels = json.load(open(os.path.join(model, "config.json")))["labels"]
    out = subprocess.run([attn, "classify", "--model", model, "--top-k", str(len(labels)), "--threads", str(threads)],
                         input="\n".join(texts) + "\n", capture_output=True, text=True, check=True).stdout
    rows = out.rstrip("\n").split("\n")
    if len(rows) != len(texts):
        sys.exit(f"{model}: {len(rows)} output lines for {len(texts)} texts")
    probs = []
    for row in rows:
        f = row.split("\t")
        probs.append({f[i]: float(f[i + 1]) for i in range(0, len(f), 2)})
    return probs


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attn", required=True); p.add_argument("--data", required=True)
    p.add_argument("--threads", type=int, default=1); p.add_argument("models", nargs="+")
    a = p.parse_args()
    rows = []
    for n, line in enumerate(open(a.data, encoding="utf-8"), 1):
        label, tab, text = line.rstrip("\n").partition("\t")
        if not tab or not text.strip():
            sys.exit(f"{a.data}:{n}: expected label<TAB>text")
        rows.append((label, text))
    total = [dict() for _ in rows]
    for model in a.models:
        probs = probabilities(a.attn, model, [t for _, t in rows], a.threads)
        right = sum(max(pr, key=pr.get) == lab for pr, (lab, _) in zip(probs, rows))
        print(f"{model}: accuracy {100 * right / len(rows):.2f}%")
        for acc, pr in zip(total, probs):
            for k, v in pr.items():
                acc[k] = acc.get(k, 0.0) + v / len(a.models)
    right = sum(max(pr, key=pr.get) == lab for pr, (lab, _) in zip(total, rows))
    print(f"average of {len(a.models)} models: accuracy {100 * right / len(rows):.2f}% ({right}/{len(rows)}) on {a.data}")


if __name__ == "__main__":
    main()
