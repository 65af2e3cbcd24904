"""Seed 002's Transformer classifier in PyTorch (Chinese-Text-Classification-Pytorch's
models/Transformer.py, its layer order kept), with attn's options: standard head split, key-padding
mask, mean / [CLS] pooling. Used for the parity fixtures and to train the same configuration in
PyTorch for comparison (train() below, `/usr/bin/python3 torch_classifier.py --help`).

attn's checkpoint keys differ only in packing fc_Q/fc_K/fc_V into in_proj (see attn_state_dict)."""
import argparse, collections, json, math, time
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d, heads, dropout, seed_split):
        super().__init__()
        self.heads, self.dk, self.seed_split = heads, d // heads, seed_split
        self.fc_Q, self.fc_K, self.fc_V = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.fc = nn.Linear(d, d)
        self.dropout = nn.Dropout(dropout)
        self.layer_norm = nn.LayerNorm(d)

    def split(self, x):  # [B, L, d] -> [B, h, L, dk]
        B, L, _ = x.shape
        if self.seed_split:
            return x.reshape(B, self.heads, L, self.dk)  # the seed's Q.view(B * h, -1, dk)
        return x.view(B, L, self.heads, self.dk).transpose(1, 2)

    def forward(self, x, pad):
        B, L, d = x.shape
        q, k, v = self.split(self.fc_Q(x)), self.split(self.fc_K(x)), self.split(self.fc_V(x))
        s = q @ k.transpose(-1, -2) * self.dk ** -0.5
        if pad is not None:
            s = s.masked_fill(pad[:, None, None, :], float("-inf"))
        ctx = F.softmax(s, dim=-1) @ v
        ctx = ctx.reshape(B, L, d) if self.seed_split else ctx.transpose(1, 2).reshape(B, L, d)
        return self.layer_norm(x + self.dropout(self.fc(ctx)))


class FeedForward(nn.Module):
    def __init__(self, d, hidden, dropout):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.dropout = nn.Dropout(dropout)
        self.layer_norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.layer_norm(x + self.dropout(self.fc2(F.relu(self.fc1(x)))))


class Classifier(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        d, L = c["d_model"], c["pad_size"]
        self.embedding = nn.Embedding(c["vocab"], d, padding_idx=0)
        pe = torch.tensor([[pos / (10000.0 ** (i // 2 * 2.0 / d)) for i in range(d)] for pos in range(L)],
                          dtype=torch.float64)
        pe[:, 0::2] = torch.sin(pe[:, 0::2])
        pe[:, 1::2] = torch.cos(pe[:, 1::2])
        self.register_buffer("pe", pe.float())
        self.dropout = nn.Dropout(c["dropout"])
        seed_split = c.get("head_split", "standard") == "seed"
        self.attn = nn.ModuleList([MultiHeadAttention(d, c["heads"], c["dropout"], seed_split) for _ in range(c["layers"])])
        self.ff = nn.ModuleList([FeedForward(d, c["d_ff"], c["dropout"]) for _ in range(c["layers"])])
        pooled = L * d if c["pooling"] == "flatten" else d
        self.fc1 = nn.Linear(pooled, c["classes"])

    def forward(self, ids):
        c = self.c
        pad = (ids == 0) if c["mask"] else None
        x = self.dropout(self.embedding(ids) + self.pe)
        for a, f in zip(self.attn, self.ff):
            x = f(a(x, pad))
        if c["pooling"] == "flatten":
            x = x.reshape(x.size(0), -1)
        elif c["pooling"] == "cls":
            x = x[:, 0]
        elif c["mask"]:
            keep = (ids != 0).float()
            x = (x * keep[..., None]).sum(1) / keep.sum(1, keepdim=True).clamp(min=1)
        else:
            x = x.mean(1)
        return self.fc1(x)


def attn_state_dict(m):
    """The model's tensors (or gradients with grads=True) under attn's checkpoint keys."""
    def pick(get):
        out = {"embedding.weight": get(m.embedding.weight), "fc.weight": get(m.fc1.weight), "fc.bias": get(m.fc1.bias)}
        for i, (a, f) in enumerate(zip(m.attn, m.ff)):
            p = f"encoder.layers.{i}."
            out[p + "self_attn.in_proj_weight"] = torch.cat([get(a.fc_Q.weight), get(a.fc_K.weight), get(a.fc_V.weight)])
            out[p + "self_attn.in_proj_bias"] = torch.cat([get(a.fc_Q.bias), get(a.fc_K.bias), get(a.fc_V.bias)])
            out[p + "self_attn.out_proj.weight"], out[p + "self_attn.out_proj.bias"] = get(a.fc.weight), get(a.fc.bias)
            out[p + "norm1.weight"], out[p + "norm1.bias"] = get(a.layer_norm.weight), get(a.layer_norm.bias)
            out[p + "linear1.weight"], out[p + "linear1.bias"] = get(f.fc1.weight), get(f.fc1.bias)
            out[p + "linear2.weight"], out[p + "linear2.bias"] = get(f.fc2.weight), get(f.fc2.bias)
            out[p + "norm2.weight"], out[p + "norm2.bias"] = get(f.layer_norm.weight), get(f.layer_norm.bias)
        return out
    return pick


# ---- training the same configuration as `attn train` (task classification) ----

def read_tsv(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line:
            label, text = line.split("\t", 1)
            rows.append((label, text))
    return rows


def tokens(text, level):
    return list(text) if level == "char" else text.split()


def build_vocab(rows, level, max_size, min_count):
    counts = collections.Counter(t for _, text in rows for t in tokens(text, level))
    vocab = {"<PAD>": 0, "<UNK>": 1, "<CLS>": 2}
    for tok, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8"))):
        if len(vocab) >= max_size or n < min_count:
            break
        vocab.setdefault(tok, len(vocab))
    return vocab


def encode(rows, vocab, labels, level, L, cls):
    ids = np.zeros((len(rows), L), dtype=np.int64)
    for i, (_, text) in enumerate(rows):
        seq = ([2] if cls else []) + [vocab.get(t, 1) for t in tokens(text, level)]
        seq = seq[:L]
        ids[i, :len(seq)] = seq
    return torch.from_numpy(ids), torch.tensor([labels.index(l) for l, _ in rows])


def evaluate(model, ids, y, batch=512):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for b in range(0, len(y), batch):
            logits = model(ids[b:b + batch])
            loss += F.cross_entropy(logits, y[b:b + batch], reduction="sum").item()
            correct += (logits.argmax(1) == y[b:b + batch]).sum().item()
    model.train()
    return loss / len(y), correct / len(y)


def bench(a):
    """Samples/s of the seed's configuration on random ids, as bench/classifier.cpp measures attn."""
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    c = dict(vocab=5000, classes=4, pad_size=32, d_model=300, heads=5, layers=2, d_ff=1024, dropout=0.5,
             pooling="flatten", mask=False, head_split="standard")
    m = Classifier(c)
    opt = torch.optim.Adam(m.parameters(), lr=5e-4)
    ids, y = torch.randint(3, 5000, (128, 32)), torch.randint(0, 4, (128,))

    def train_step():
        loss = F.cross_entropy(m(ids), y)
        opt.zero_grad(); loss.backward(); opt.step()

    def infer_step():
        with torch.no_grad():
            m(ids)

    for what, step, mode in (("train", train_step, m.train), ("inference", infer_step, m.eval)):
        mode(); step()
        t0, n = time.time(), 0
        while time.time() - t0 < a.seconds:
            step(); n += 1
        s = time.time() - t0
        print(f"{what:9s} batch 128: {1000 * s / n:6.1f} ms/batch  {n * 128 / s:7.0f} samples/s  ({n} batches, {a.threads} threads)")


def train(a):
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    train_rows, dev_rows = read_tsv(a.train), read_tsv(a.dev)
    labels = sorted({l for l, _ in train_rows})
    vocab = build_vocab(train_rows, a.level, a.max_vocab, a.min_count)
    c = dict(vocab=len(vocab), classes=len(labels), pad_size=a.pad_size, d_model=a.d_model, heads=a.heads,
             layers=a.layers, d_ff=a.d_ff, dropout=a.dropout, pooling=a.pooling, mask=a.mask, head_split=a.head_split)
    cls = a.pooling == "cls"
    X, Y = encode(train_rows, vocab, labels, a.level, a.pad_size, cls)
    Xd, Yd = encode(dev_rows, vocab, labels, a.level, a.pad_size, cls)
    model = Classifier(c)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    print(json.dumps(c), flush=True)
    for epoch in range(1, a.epochs + 1):
        perm = torch.randperm(len(Y))
        t0, seen = time.time(), 0
        for b in range(0, len(Y), a.batch):
            idx = perm[b:b + a.batch]
            loss = F.cross_entropy(model(X[idx]), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(idx)
        dt = time.time() - t0
        dl, da = evaluate(model, Xd, Yd)
        print(f"epoch {epoch}  dev loss {dl:.4f}  dev acc {da * 100:.2f}%  train {seen / dt:.0f} samples/s", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--train"); p.add_argument("--dev")
    p.add_argument("--level", default="char"); p.add_argument("--max-vocab", type=int, default=10000)
    p.add_argument("--min-count", type=int, default=1); p.add_argument("--pad-size", type=int, default=32)
    p.add_argument("--d-model", type=int, default=300); p.add_argument("--heads", type=int, default=5)
    p.add_argument("--layers", type=int, default=2); p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--dropout", type=float, default=0.5); p.add_argument("--pooling", default="flatten")
    p.add_argument("--mask", action="store_true"); p.add_argument("--head-split", default="standard")
    p.add_argument("--lr", type=float, default=5e-4); p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--batch", type=int, default=128); p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--seed", type=int, default=1); p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bench", action="store_true", help="time the seed configuration instead of training")
    p.add_argument("--seconds", type=float, default=10.0, help="with --bench: seconds per measurement")
    a = p.parse_args()
    bench(a) if a.bench else train(a)
