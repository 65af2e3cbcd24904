#!/usr/bin/python3
"""Makes tests/fixtures/decode/: what PyTorch (torch_ref.py) gives for the decoding options of
issue 27, on the committed Transformer fixtures A = post_shared_l2_h4 and B = pre_shared_l3_h2
(both with a 48-piece target vocabulary), over A's src.txt, max-len 20:
  first_step.txt        softmax of A's first step (bos fed) for line 1 of src.txt, 48 numbers
                        (the sampling test's expected frequencies)
  prefixes.txt          a target prefix per line (0 to 3 ids, none eos)
  prefix_greedy.txt     A's greedy search fed that prefix after bos: the output, prefix included
  ensemble_greedy.txt   greedy over 0.5 log p_A + 0.5 log p_B (the plain average of log-probs)
  ensemble_beam4.txt    torch_ref.py's beam search (beam 4, alpha 0.6) over 0.6 log p_A + 0.4 log p_B
  ensemble_score.txt    0.6 score_A + 0.4 score_B of A's src.txt / tgt.txt (teacher forcing)
    /usr/bin/python3 tests/decode/make_decode_fixtures.py
"""
import importlib.util
import os
import random

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures"))
OUT = os.path.join(FIXTURES, "decode")
REF = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference", "torch_ref.py"))
MAX_LEN = 20

spec = importlib.util.spec_from_file_location("torch_ref", REF)
torch_ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch_ref)


class Ensemble:
    """log p(y | prefix, x) = sum_m w_m log p_m(y | prefix, x), each model its own encoder pass."""

    def __init__(self, models, weights):
        self.models, self.weights = models, weights
        self.cfg = models[0].cfg

    def start(self, src):
        return [m.encode(src) for m in self.models]

    def step(self, memories, ys):
        out = None
        for m, w, (memory, pad) in zip(self.models, self.weights, memories):
            lp = w * m.decode(torch.tensor([ys]), memory, pad)[0, -1]
            out = lp if out is None else out + lp
        return out


@torch.no_grad()
def greedy(model, src, prefix=()):
    """argmax after bos + prefix until eos or MAX_LEN tokens (prefix included); eos not returned."""
    memories = model.start(src)
    ys = [model.cfg["bos_id"]] + list(prefix)
    while len(ys) - 1 < MAX_LEN:
        nxt = int(model.step(memories, ys).argmax())
        if nxt == model.cfg["eos_id"]:
            break
        ys.append(nxt)
    return ys[1:]


@torch.no_grad()
def beam(model, src, k, alpha):
    """torch_ref.beam_search step for step, over the ensemble's log-probs."""
    bos, eos = model.cfg["bos_id"], model.cfg["eos_id"]
    lp = lambda n: ((5.0 + n) / 6.0) ** alpha
    memories = model.start(src)
    alive, finished = [([], 0.0)], []
    for _ in range(MAX_LEN):
        cands = []
        for ys, score in alive:
            top = torch.topk(model.step(memories, [bos] + ys), k)
            cands += [(ys + [int(t)], score + float(v)) for v, t in zip(top.values, top.indices)]
        cands.sort(key=lambda c: -c[1])
        alive = []
        for ys, score in cands:
            if ys[-1] == eos:
                finished.append((score / lp(len(ys)), ys[:-1]))
            else:
                alive.append((ys, score))
            if len(alive) == k:
                break
        finished.sort(key=lambda f: -f[0])
        finished = finished[:k]
        best_possible = max(s / lp(MAX_LEN if alpha > 0 else len(ys) + 1) for ys, s in alive) if alive else -1e30
        if len(finished) == k and finished[-1][0] >= best_possible or not alive:
            break
    if not finished:
        finished = sorted(((s / lp(len(ys)), ys) for ys, s in alive), key=lambda f: -f[0])
    return finished[0][1]


@torch.no_grad()
def score(model, src, tgt):
    memories = model.start(src)
    ys = [model.cfg["bos_id"]] + tgt
    total = 0.0
    for t, y in enumerate(tgt + [model.cfg["eos_id"]]):
        total += float(model.step(memories, ys[: t + 1])[y])
    return total


def write(name, rows):
    with open(os.path.join(OUT, name), "w") as f:
        for r in rows:
            f.write((" ".join(map(str, r)) if isinstance(r, list) else str(r)) + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    a = torch_ref.load(os.path.join(FIXTURES, "transformer", "post_shared_l2_h4"))
    b = torch_ref.load(os.path.join(FIXTURES, "transformer", "pre_shared_l3_h2"))
    src_file = os.path.join(FIXTURES, "transformer", "post_shared_l2_h4", "src.txt")
    tgt_file = os.path.join(FIXTURES, "transformer", "post_shared_l2_h4", "tgt.txt")
    sources = [line.strip() for line in open(src_file)]
    targets = [[int(t) for t in line.split()] for line in open(tgt_file)]
    only_a = Ensemble([a], [1.0])
    memory, pad = a.encode(torch_ref.ids(sources[0]))
    first = torch.softmax(a.decode(torch.tensor([[a.cfg["bos_id"]]]), memory, pad)[0, -1].double(), dim=-1)
    write("first_step.txt", ["%.9g" % float(p) for p in first])
    rnd = random.Random(27)
    prefixes = [[rnd.randint(3, 39) for _ in range(i % 4)] for i in range(len(sources))]
    write("prefixes.txt", prefixes)
    write("prefix_greedy.txt", [greedy(only_a, torch_ref.ids(s), p) for s, p in zip(sources, prefixes)])
    avg = Ensemble([a, b], [0.5, 0.5])
    write("ensemble_greedy.txt", [greedy(avg, torch_ref.ids(s)) for s in sources])
    weighted = Ensemble([a, b], [0.6, 0.4])
    write("ensemble_beam4.txt", [beam(weighted, torch_ref.ids(s), 4, 0.6) for s in sources])
    write("ensemble_score.txt", ["%.6f" % score(weighted, torch_ref.ids(s), t) for s, t in zip(sources, targets)])
    print("made", OUT)


if __name__ == "__main__":
    main()
