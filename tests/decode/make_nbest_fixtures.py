#!/usr/bin/python3
"""Makes nbest4.json beside each Transformer fixture: the whole 4-best list of torch_ref.py's beam
search (beam 4, alpha 0.6, max-len 20) for every line of src.txt, as [[ids, score, logprob], ...]
best first. torch_ref.py's beam command prints only the best hypothesis; this runs its
beam_search with the finished list kept (the same algorithm, step for step, on the same model).
    /usr/bin/python3 tests/decode/make_nbest_fixtures.py
"""
import importlib.util
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures", "transformer"))
REF = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference", "torch_ref.py"))

spec = importlib.util.spec_from_file_location("torch_ref", REF)
torch_ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch_ref)


@torch.no_grad()
def beam_nbest(model, src, k, alpha, max_len):
    """torch_ref.beam_search, returning the finished list (score, ids, logprob) instead of its head."""
    bos, eos = model.cfg["bos_id"], model.cfg["eos_id"]
    lp = lambda n: ((5.0 + n) / 6.0) ** alpha
    memory, pad = model.encode(src)
    alive = [([], 0.0)]
    finished = []
    for step in range(max_len):
        cands = []
        for ys, score in alive:
            logp = model.decode(torch.tensor([[bos] + ys]), memory, pad)[0, -1]
            top = torch.topk(logp, k)
            cands += [(ys + [int(t)], score + float(v)) for v, t in zip(top.values, top.indices)]
        cands.sort(key=lambda c: -c[1])
        alive = []
        for ys, score in cands:
            if ys[-1] == eos:
                finished.append((score / lp(len(ys)), ys[:-1], score))
            else:
                alive.append((ys, score))
            if len(alive) == k:
                break
        finished.sort(key=lambda f: -f[0])
        finished = finished[:k]
        best_possible = max(s / lp(max_len if alpha > 0 else len(ys) + 1) for ys, s in alive) if alive else -1e30
        if len(finished) == k and finished[-1][0] >= best_possible or not alive:
            break
    if not finished:
        finished = [(s / lp(len(ys)), ys, s) for ys, s in alive]
        finished.sort(key=lambda f: -f[0])
    return finished


def main():
    for name in sorted(os.listdir(FIXTURES)):
        d = os.path.join(FIXTURES, name)
        model = torch_ref.load(d)
        lists = []
        with open(os.path.join(d, "src.txt")) as f:
            for line in f:
                hyps = beam_nbest(model, torch_ref.ids(line), 4, 0.6, 20)
                lists.append([[ids, round(score, 6), round(logprob, 6)] for score, ids, logprob in hyps])
        with open(os.path.join(d, "nbest4.json"), "w") as f:
            json.dump(lists, f)
            f.write("\n")
        print(name, sum(len(l) for l in lists), "hypotheses")


if __name__ == "__main__":
    main()
