"""Self-trained word vectors from unlabelled text on this machine (no downloads), for
`attn train --set task=classification --set data.embeddings=FILE`: positive pointwise mutual
information of word/context counts in a symmetric window, factored by a truncated SVD (Levy,
Goldberg & Dagan 2015, "Improving distributional similarity with lessons learned from word
embeddings": context distribution smoothing 0.75, eigenvalue weighting 0.5).

  /usr/bin/python3 bench/ppmi_embeddings.py --dim 128 --out runs/brown-ppmi128.txt \
      --text ../shared/data/cls-en-brown/train.tsv:2 --text ../shared/data/mt-ende/train.en

Tokens are cut as attn's `data.tokens: word` cuts them (whitespace, case kept), so every vector
lands on the classifier's token. `--text FILE:2` reads the second tab-separated column (the text of
a label<TAB>text file; never the labels). Output: word2vec text ("N D" then "token v1 .. vD"),
each component scaled to standard deviation 1 over the words, the scale of the N(0, 1) rows
attn initialises the other tokens with."""
import argparse, collections, sys

import numpy as np
import torch


def read_lines(spec):
    path, _, column = spec.partition(":")
    col = int(column) - 1 if column else None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if col is not None:
                parts = line.split("\t")
                if len(parts) <= col:
                    sys.exit(f"{path}:{n}: no column {col + 1}")
                line = parts[col]
            yield line.split()


def cooccurrences(lines, words, contexts, window):
    """Dense [words, contexts] counts of context c within `window` tokens of word w (either side)."""
    wid, cid = {t: i for i, t in enumerate(words)}, {t: i for i, t in enumerate(contexts)}
    W, C = len(words), len(contexts)
    counts = np.zeros(W * C, dtype=np.float64)
    keys, pending = [], 0
    for toks in lines:
        w = np.array([wid.get(t, -1) for t in toks]); c = np.array([cid.get(t, -1) for t in toks])
        for k in range(1, window + 1):
            for a, b in ((w[:-k], c[k:]), (w[k:], c[:-k])):
                ok = (a >= 0) & (b >= 0)
                keys.append(a[ok] * C + b[ok])
                pending += len(keys[-1])
        if pending > 20_000_000:
            counts += np.bincount(np.concatenate(keys), minlength=W * C); keys, pending = [], 0
    if keys:
        counts += np.bincount(np.concatenate(keys), minlength=W * C)
    return counts.reshape(W, C)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--text", action="append", required=True, help="FILE or FILE:COLUMN (1-based, tab-separated)")
    p.add_argument("--out", required=True); p.add_argument("--dim", type=int, default=128)
    p.add_argument("--words", type=int, default=20000, help="most frequent tokens that get a vector")
    p.add_argument("--contexts", type=int, default=5000, help="most frequent tokens counted as contexts")
    p.add_argument("--window", type=int, default=5); p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    lines = [toks for spec in a.text for toks in read_lines(spec)]
    freq = collections.Counter(t for toks in lines for t in toks)
    words = [t for t, _ in freq.most_common(a.words)]
    M = cooccurrences(lines, words, words[:a.contexts], a.window)
    pc = M.sum(0) ** 0.75
    pmi = np.log(np.maximum(M, 1e-30) * pc.sum() / (M.sum(1, keepdims=True) + 1e-30) / pc)
    ppmi = torch.from_numpy(np.where(M > 0, np.maximum(pmi, 0), 0).astype(np.float32))
    torch.manual_seed(a.seed)
    U, S, _ = torch.svd_lowrank(ppmi, q=a.dim, niter=4)
    E = (U * S.sqrt()).numpy()
    E = E / E.std(0, keepdims=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(f"{len(words)} {a.dim}\n")
        for t, v in zip(words, E):
            f.write(t + " " + " ".join(f"{x:.4f}" for x in v) + "\n")
    print(f"{a.out}: {len(words)} words x {a.dim} from {sum(map(len, lines))} tokens in {len(lines)} lines")


if __name__ == "__main__":
    main()
