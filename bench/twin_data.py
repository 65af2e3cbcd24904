"""attn's training data in Python, for bench/torch_translation_twin.py: the same examples and the
same batches in the same order as `attn train` (src/data/text_file.cpp, parallel_corpus.cpp,
batcher.cpp, include/attn/tensor/random.h), so that the PyTorch twin trains on exactly what attn
trains on. Needs Debian's python3-sentencepiece (the library attn links, so the same ids).

- Lines: a UTF-8 BOM dropped, split at '\\n', one trailing '\\r' dropped, strict UTF-8.
- Pairs: tokenised with the SentencePiece model (no bos/eos); skipped when a side has no token or
  a side has more than max_len tokens (CorpusOptions::training).
- Epoch e: Rng(random_bits(seed, e)); Fisher-Yates over the example indices; in windows of
  bucket_window examples (about 100 batches' worth), a stable sort by (longer side, target,
  source) padded lengths; each window cut greedily while B*S and B*T stay within max_tokens; then
  Fisher-Yates over the batches. Rng.below(n) is the next 64-bit number mod n.
"""
import numpy as np

MASK = (1 << 64) - 1
PAD, BOS, EOS = 0, 1, 2


def splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def random_bits(seed, k):
    """The k-th 64-bit number of stream `seed` (random.h's random_bits)."""
    return splitmix64(splitmix64(seed) ^ ((k * 0xD1B54A32D192ED03) & MASK))


class Rng:
    """attn's counter-based stream: the k-th number is random_bits(seed, k)."""

    def __init__(self, seed, counter=0):
        self.key, self.counter = splitmix64(seed & MASK), counter

    def below(self, n):
        z = splitmix64(self.key ^ ((self.counter * 0xD1B54A32D192ED03) & MASK))
        self.counter += 1
        return z % n


def shuffle(items, rng):
    """In place Fisher-Yates, as batcher.cpp's shuffle."""
    for i in range(len(items), 1, -1):
        j = rng.below(i)
        items[i - 1], items[j] = items[j], items[i - 1]


def read_lines(path):
    """text_file.cpp's read_lines: BOM, '\\n', one '\\r', strict UTF-8 (errors name file:line)."""
    data = open(path, "rb").read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    parts = data.split(b"\n")
    if not data or data.endswith(b"\n"):
        parts.pop()
    lines = []
    for number, raw in enumerate(parts, 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise SystemExit(f"{path}:{number}: invalid UTF-8 (byte 0x{raw[e.start]:02X} at column {e.start + 1})")
    return lines


def read_corpus(src_path, tgt_path, sp, max_len):
    """[(src ids, tgt ids, line)] and the counts of parallel_corpus.cpp's training reader."""
    src_lines, tgt_lines = read_lines(src_path), read_lines(tgt_path)
    if len(src_lines) != len(tgt_lines):
        raise SystemExit(f"parallel corpus: {src_path} has {len(src_lines)} lines but {tgt_path} has "
                         f"{len(tgt_lines)} lines; the files must be aligned line by line")
    src, tgt = sp.encode(src_lines), sp.encode(tgt_lines)
    examples, stats = [], dict(lines=len(src), kept=0, skipped_empty=0, skipped_long=0, src_tokens=0, tgt_tokens=0)
    for i, (s, t) in enumerate(zip(src, tgt)):
        if not s or not t:
            stats["skipped_empty"] += 1
        elif max_len > 0 and max(len(s), len(t)) > max_len:
            stats["skipped_long"] += 1
        else:
            stats["src_tokens"] += len(s)
            stats["tgt_tokens"] += len(t)
            examples.append((s, t, i))
    stats["kept"] = len(examples)
    return examples, stats


def length_key(e):
    s, t = len(e[0]) + 1, len(e[1]) + 1
    return (max(s, t), t, s)


def default_window(examples, max_tokens):
    """About 100 batches' worth of examples, from the mean padded length (batcher.cpp)."""
    total = 0.0
    for e in examples:
        total += float(max(len(e[0]) + 1, len(e[1]) + 1))
    per_batch = max(1, int(max_tokens / (total / len(examples))))
    return min(max(100 * per_batch, 1), len(examples))


def cut(examples, order, max_tokens, out):
    """Greedy cut: a pair joins the batch while both padded sides stay within max_tokens."""
    batch, s_max, t_max = [], 0, 0
    for i in order:
        e = examples[i]
        s, t = max(s_max, len(e[0]) + 1), max(t_max, len(e[1]) + 1)
        b = len(batch) + 1
        if not (b * s <= max_tokens and b * t <= max_tokens) and batch:
            out.append(batch)
            batch, s_max, t_max = [], len(e[0]) + 1, len(e[1]) + 1
        else:
            s_max, t_max = s, t
        batch.append(i)
    if batch:
        out.append(batch)


def plan_epoch(examples, max_tokens, seed, epoch, window):
    """Epoch `epoch`'s batches as lists of example indices, in attn's order."""
    rng = Rng(random_bits(seed & MASK, epoch))
    order = list(range(len(examples)))
    shuffle(order, rng)
    batches = []
    for w in range(0, len(order), window):
        part = sorted(order[w:w + window], key=lambda i: length_key(examples[i]))  # stable, as std::stable_sort
        cut(examples, part, max_tokens, batches)
    shuffle(batches, rng)
    return batches


class Batcher:
    """attn's data::Batcher: the batches of epoch 0, then of epoch 1, ..."""

    def __init__(self, examples, max_tokens, seed):
        for e in examples:
            if len(e[0]) + 1 > max_tokens or len(e[1]) + 1 > max_tokens:
                raise SystemExit(f"batcher: the pair of line {e[2] + 1} does not fit max_tokens {max_tokens}")
        self.examples, self.max_tokens, self.seed = examples, max_tokens, seed
        self.window = default_window(examples, max_tokens)
        self.epoch, self.next = 0, 0
        self.plan = plan_epoch(examples, max_tokens, seed, 0, self.window)

    def __next__(self):
        indices = self.plan[self.next]
        self.next += 1
        if self.next == len(self.plan):
            self.epoch, self.next = self.epoch + 1, 0
            self.plan = plan_epoch(self.examples, self.max_tokens, self.seed, self.epoch, self.window)
        return make_batch(self.examples, indices)


def make_batch(examples, indices):
    """(src [B,S] = x+eos, tgt_in [B,T] = bos+y, tgt_out [B,T] = y+eos, target tokens), pad 0."""
    rows = [examples[i] for i in indices]
    S, T = max(len(e[0]) for e in rows) + 1, max(len(e[1]) for e in rows) + 1
    src = np.zeros((len(rows), S), dtype=np.int64)
    tin = np.zeros((len(rows), T), dtype=np.int64)
    tout = np.zeros((len(rows), T), dtype=np.int64)
    for r, (s, t, _) in enumerate(rows):
        src[r, :len(s)], src[r, len(s)] = s, EOS
        tin[r, 0], tin[r, 1:len(t) + 1] = BOS, t
        tout[r, :len(t)], tout[r, len(t)] = t, EOS
    return src, tin, tout, sum(len(e[1]) + 1 for e in rows)


def batches_in_order(examples, max_tokens):
    """Every example once, longest first (batcher.cpp's batches_in_order), for the dev loss."""
    order = sorted(range(len(examples)), key=lambda i: length_key(examples[i]), reverse=True)
    # std::stable_sort with '>' keeps ties in input order; sorted(reverse=True) does too.
    plan = []
    cut(examples, order, max_tokens, plan)
    return [make_batch(examples, p) for p in plan]


def fingerprint(examples, max_tokens, seed, window):
    """batcher.cpp's FNV-1a over the options and every token (what attn's checkpoints keep as
    batcher.fingerprint): equal only when the examples and the batch options are attn's."""
    h = 1469598103934665603

    def mix(v):
        nonlocal h
        for _ in range(8):
            h = ((h ^ (v & 0xFF)) * 1099511628211) & MASK
            v >>= 8

    for v in (max_tokens, 0, seed, window, len(examples)):
        mix(v)
    for s, t, _ in examples:
        mix(len(s))
        mix(len(t))
        for i in s:
            mix(i)
        for i in t:
            mix(i)
    return h if h else 1
