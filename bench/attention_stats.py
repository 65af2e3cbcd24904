"""Statistics of bench/attention_report.py, stdlib only: sacreBLEU's corpus BLEU (13a tokenizer, exp
smoothing) from per-sentence n-gram statistics, and paired bootstrap resampling (Koehn 2004) of a
difference in BLEU or in summed dev NLL, so a verdict says whether a gap is larger than the noise
of the sentences that happened to be drawn."""
import math
import random
import re
from collections import Counter

_13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = f" {line} "
    for regex, sub in _13A:
        line = regex.sub(sub, line)
    return line.split()


def _ngrams(words, n):
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def sentence_stats(hyp, ref):
    """[hyp_len, ref_len, correct_1..4, total_1..4] of one sentence pair."""
    h, r = tokenize_13a(hyp), tokenize_13a(ref)
    correct, total = [], []
    for n in range(1, 5):
        hn, rn = _ngrams(h, n), _ngrams(r, n)
        correct.append(sum(min(c, rn[g]) for g, c in hn.items()))
        total.append(max(len(h) - n + 1, 0))
    return [len(h), len(r)] + correct + total


def corpus_bleu(stats):
    """sacreBLEU's corpus BLEU from summed sentence_stats rows."""
    s = [sum(col) for col in zip(*stats)] if stats else [0] * 10
    sys_len, ref_len, correct, total = s[0], s[1], s[2:6], s[6:10]
    if sys_len == 0:
        return 0.0
    smooth, logs = 1.0, []
    for n in range(4):
        if total[n] == 0:
            logs.append(-9999999999.0)
            continue
        if correct[n] == 0:
            smooth *= 2
            p = 100.0 / (smooth * total[n])
        else:
            p = 100.0 * correct[n] / total[n]
        logs.append(math.log(p))
    bp = 1.0 if sys_len >= ref_len else math.exp(1 - ref_len / sys_len)
    return bp * math.exp(sum(logs) / 4)


def paired_bootstrap(metric_a, metric_b, n, samples=1000, seed=12345):
    """metric_x(indices) -> value on a resample of sentence indices. Returns (delta on all sentences,
    fraction of resamples where a > b, fraction where a < b)."""
    rng = random.Random(seed)
    full = list(range(n))
    delta = metric_a(full) - metric_b(full)
    wins = losses = 0
    for _ in range(samples):
        idx = [rng.randrange(n) for _ in range(n)]
        d = metric_a(idx) - metric_b(idx)
        wins += d > 0
        losses += d < 0
    return delta, wins / samples, losses / samples


def bleu_bootstrap(stats_a, stats_b, samples=1000):
    """Paired bootstrap of BLEU(a) - BLEU(b) (each a list of sentence_stats rows, same sentences)."""
    return paired_bootstrap(lambda idx: corpus_bleu([stats_a[i] for i in idx]),
                            lambda idx: corpus_bleu([stats_b[i] for i in idx]), len(stats_a), samples)


def nll_bootstrap(nll_a, nll_b, samples=1000):
    """Paired bootstrap of sum NLL(b) - sum NLL(a) per sentence (> 0: a has the lower loss)."""
    return paired_bootstrap(lambda idx: -sum(nll_a[i] for i in idx),
                            lambda idx: -sum(nll_b[i] for i in idx), len(nll_a), samples)


def verdict(delta, p_better, p_worse, level=0.95):
    """'better' / 'worse' when the resamples agree at `level`, else 'tie'."""
    if delta > 0 and p_better >= level:
        return "better"
    if delta < 0 and p_worse >= level:
        return "worse"
    return "tie"
