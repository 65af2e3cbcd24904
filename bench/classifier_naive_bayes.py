"""Multinomial naive Bayes baseline for the classification sets (the figure a Transformer
classifier must beat): character pairs for Chinese, lower-cased words for English.
  /usr/bin/python3 bench/classifier_naive_bayes.py --train T.tsv --dev D.tsv --features char2|word [--alpha A ...]
      [--test HELDOUT.tsv]
With --test, the alpha with the best dev accuracy (the first of equals) scores the held-out file once."""
import argparse, collections, math


def read_tsv(path):
    return [l.rstrip("\n").split("\t", 1) for l in open(path, encoding="utf-8") if l.strip()]


def features(text, kind):
    if kind == "char2":
        return [text[i:i + 2] for i in range(len(text) - 1)]
    if kind == "char12":
        return list(text) + [text[i:i + 2] for i in range(len(text) - 1)]
    return text.lower().split()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--train", required=True); p.add_argument("--dev", required=True)
    p.add_argument("--features", default="char2"); p.add_argument("--alpha", type=float, nargs="+", default=[1.0])
    p.add_argument("--test", help="held-out file scored once with the alpha best on dev")
    p.add_argument("--top", type=int, default=0, help="keep only the N most frequent training features (0: all)")
    a = p.parse_args()
    train, dev = read_tsv(a.train), read_tsv(a.dev)
    counts, totals, docs = collections.defaultdict(collections.Counter), collections.Counter(), collections.Counter()
    for label, text in train:
        f = features(text, a.features)
        counts[label].update(f); totals[label] += len(f); docs[label] += 1
    if a.top > 0:  # the other features are dropped from training and scoring alike
        freq = sum(counts.values(), collections.Counter())
        keep = {t for t, _ in freq.most_common(a.top)}
        for c in counts:
            counts[c] = collections.Counter({t: n for t, n in counts[c].items() if t in keep})
            totals[c] = sum(counts[c].values())
    vocab = set().union(*counts.values())
    labels = sorted(counts)
    def correct(rows, alpha):
        n = 0
        for label, text in rows:
            f = features(text, a.features)
            best = max(labels, key=lambda c: math.log(docs[c] / len(train)) + sum(
                math.log((counts[c][t] + alpha) / (totals[c] + alpha * len(vocab))) for t in f if t in vocab))
            n += best == label
        return n

    on_dev = []
    for alpha in a.alpha:
        on_dev.append(correct(dev, alpha))
        print(f"naive Bayes ({a.features}, alpha {alpha}): dev accuracy {100 * on_dev[-1] / len(dev):.2f}% "
              f"({on_dev[-1]}/{len(dev)}), {len(labels)} classes, {len(vocab)} features")
    if a.test:
        alpha = a.alpha[on_dev.index(max(on_dev))]
        test = read_tsv(a.test)
        n = correct(test, alpha)
        print(f"naive Bayes ({a.features}, alpha {alpha}, chosen on dev): test accuracy {100 * n / len(test):.2f}% ({n}/{len(test)})")


if __name__ == "__main__":
    main()
