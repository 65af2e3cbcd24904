#!/usr/bin/python3
"""PyTorch twins of bench_train and bench_translate, on the model of ../shared/reference/torch_ref.py.

  torch_bench.py train --config base|small [--threads N] [--batch B] [--len T] [--steps S] [--warmup W]
  torch_bench.py translate --model DIR --src IDS [--out IDS] [--beam K] [--batch B] [--max-len N] [--alpha A]

train: full optimizer steps (forward, label-smoothed cross-entropy, backward, Adam) on random ids,
as bench/train.cpp does. translate: greedy or beam search WITHOUT a cache (the whole prefix is
decoded again at every step, as torch_ref.py does); beam with batch 1 is torch_ref.beam_search
itself, with batch > 1 the same rules over a batch of sentences. Prints one JSON line.
Run with Debian's /usr/bin/python3 and OMP_WAIT_POLICY=PASSIVE.
"""
import argparse
import json
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "reference"))
import torch_ref  # noqa: E402

CONFIGS = {
    "base": dict(d_model=512, heads=8, encoder_layers=6, decoder_layers=6, ff=2048),
    "small": dict(d_model=256, heads=4, encoder_layers=3, decoder_layers=3, ff=1024),
}


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def logits(model, src, tgt_in):
    """torch_ref's encode + decode without the final log_softmax (the loss applies its own)."""
    memory, pad = model.encode(src)
    n = tgt_in.shape[1]
    causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
    out = model.transformer.decoder(model.embed(model.tgt_embed, tgt_in), memory, tgt_mask=causal,
                                    memory_key_padding_mask=pad)
    return model.generator(out)


def train(a):
    cfg = dict(torch_ref.DEFAULTS, src_vocab=8000, tgt_vocab=8000, dropout=0.1, max_len=512, **CONFIGS[a.config])
    torch.manual_seed(1)
    model = torch_ref.Seq2SeqTransformer(cfg).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=cfg["pad_id"])
    g = torch.Generator().manual_seed(5)
    src, tgt_in, tgt_out = (torch.randint(3, 8000, (a.batch, a.len), generator=g) for _ in range(3))

    def step():
        z = logits(model, src, tgt_in)
        loss = loss_fn(z.reshape(-1, z.shape[-1]), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    step_s = (time.perf_counter() - t0) / a.steps
    print(json.dumps(dict(system="torch", config=a.config, threads=a.threads, tokens_per_s=a.batch * a.len / step_s,
                          step_s=step_s, steps=a.steps, last_loss=loss, peak_rss_mb=peak_rss_mb())))


def cut_at_eos(ids, eos):
    return ids[: ids.index(eos)] if eos in ids else ids


def pad_batch(rows, pad_id):
    n = max(len(r) for r in rows)
    return torch.tensor([r + [pad_id] * (n - len(r)) for r in rows], dtype=torch.long)


@torch.no_grad()
def beam_batch(model, sources, k, alpha, max_len):
    """torch_ref.beam_search's rules for a batch of sentences: all live prefixes of all sentences
    are decoded in one call at every step."""
    bos, eos = model.cfg["bos_id"], model.cfg["eos_id"]
    lp = lambda n: ((5.0 + n) / 6.0) ** alpha  # noqa: E731
    memory, pad = model.encode(pad_batch(sources, model.cfg["pad_id"]))
    alive = [[([], 0.0)] for _ in sources]
    finished = [[] for _ in sources]
    done = [False] * len(sources)
    for step in range(max_len):
        rows = [(i, j) for i in range(len(sources)) if not done[i] for j in range(len(alive[i]))]
        if not rows:
            break
        idx = torch.tensor([i for i, _ in rows])
        ys = torch.tensor([[bos] + alive[i][j][0] for i, j in rows])
        logp = model.decode(ys, memory[idx], pad[idx])[:, -1]
        top = torch.topk(logp, k)
        for i in set(i for i, _ in rows):
            cands = []
            for r, (ii, j) in enumerate(rows):
                if ii != i:
                    continue
                ys_j, score = alive[i][j]
                cands += [(ys_j + [int(t)], score + float(v)) for v, t in zip(top.values[r], top.indices[r])]
            cands.sort(key=lambda c: -c[1])
            new = []
            for ys_c, score in cands:
                if ys_c[-1] == eos:
                    finished[i].append((score / lp(len(ys_c)), ys_c[:-1]))
                else:
                    new.append((ys_c, score))
                if len(new) == k:
                    break
            alive[i] = new
            finished[i].sort(key=lambda f: -f[0])
            finished[i] = finished[i][:k]
            best = max(s / lp(max_len if alpha > 0 else len(y) + 1) for y, s in new) if new else -1e30
            if len(finished[i]) == k and finished[i][-1][0] >= best or not new:
                done[i] = True
    out = []
    for i in range(len(sources)):
        f = finished[i] or sorted([(s / lp(len(y)), y) for y, s in alive[i]], key=lambda f: -f[0])
        out.append(f[0][1])
    return out


@torch.no_grad()
def translate(a):
    model = torch_ref.load(a.model)
    eos = model.cfg["eos_id"]
    sources = [[int(t) for t in line.split()] for line in open(a.src)]
    outputs = []
    t0 = time.perf_counter()
    for first in range(0, len(sources), a.batch):
        chunk = sources[first:first + a.batch]
        if a.beam == 1:
            ys = model.greedy(pad_batch(chunk, model.cfg["pad_id"]), a.max_len)
            outputs += [cut_at_eos(row, eos) for row in ys.tolist()]
        elif len(chunk) == 1:
            outputs.append(torch_ref.beam_search(model, torch.tensor(chunk), a.beam, a.alpha, a.max_len))
        else:
            outputs += beam_batch(model, chunk, a.beam, a.alpha, a.max_len)
    seconds = time.perf_counter() - t0
    tokens = sum(len(o) for o in outputs)
    if a.out:
        with open(a.out, "w") as f:
            for o in outputs:
                f.write(" ".join(map(str, o)) + "\n")
    print(json.dumps(dict(system="torch", beam=a.beam, batch=a.batch, threads=a.threads, tokens_per_s=tokens / seconds,
                          seconds=seconds, tokens=tokens, peak_rss_mb=peak_rss_mb())))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["train", "translate"])
    p.add_argument("--config", default="small", choices=sorted(CONFIGS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--len", type=int, default=32)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--model"); p.add_argument("--src"); p.add_argument("--out")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--max-len", type=int, default=32)
    p.add_argument("--alpha", type=float, default=0.0)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.cmd == "train":
        a.batch = a.batch or 128
        train(a)
    else:
        a.batch = a.batch or 1
        translate(a)


if __name__ == "__main__":
    main()
