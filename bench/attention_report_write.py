"""Writes the Markdown report and its SVG plots for bench/attention_report.py from the runs' figures.
Every verdict in the "claims" section is computed here from those figures (paired bootstrap over
the dev sentences for BLEU and dev loss; ratios for speed); nothing is written in advance."""
import json
import os

import attention_report_svg as svg
import attention_stats as stats

SPEED_MARGIN = 1.10  # a speed ratio beyond 10% either way counts as a difference (timings are noisy)


def _by_name(specs):
    return {s["name"]: s for s in specs}


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def _tokens_per_sentence_set(specs):
    """Target tokens in the evaluated dev sentences: summed NLL of the final weights over the trainer's
    dev loss per token (its last validation runs on the same weights and sentences). Median over runs."""
    counts = []
    for s in specs:
        per_token = s["train"]["final_dev_nll_per_token"]
        if per_token:
            counts.append(sum(s["eval"]["curve"][-1]["nll"]) / per_token)
    counts.sort()
    return (counts[len(counts) // 2] if counts else None), counts


def _prepare(specs, files):
    refs = _read(files["dev.de"])
    ntok, counts = _tokens_per_sentence_set(specs)
    ref_words = sum(len(r.split()) for r in refs)
    for s in specs:
        e = s["eval"]
        unit = ntok or len(refs)
        s["curve"] = [(c["minutes"], sum(c["nll"]) / unit) for c in e["curve"]]
        s["dev_loss"] = s["curve"][-1][1]
        s["sent_nll"] = e["curve"][-1]["nll"]
        for beam, d in e["decode"].items():
            hyps = _read(d["hyp"])
            d["words"] = sum(len(h.split()) for h in hyps)
            d["words_per_s"] = d["words"] / d["seconds"]
            d["sents_per_s"] = len(hyps) / d["seconds"]
            d["len_ratio"] = d["words"] / max(ref_words, 1)
            d["stats"] = [stats.sentence_stats(h, r) for h, r in zip(hyps, refs)]
            d["py_bleu"] = stats.corpus_bleu(d["stats"])
    return ntok, counts, refs


def _loss_at(s, minutes):
    """(minutes, per-sentence NLL) of the checkpoint of s nearest to `minutes`."""
    best = min(s["eval"]["curve"], key=lambda c: abs(c["minutes"] - minutes))
    return best["minutes"], best["nll"]


def _time_to_reach(s, loss):
    """Minutes (interpolated on the curve) at which s first reaches dev loss `loss`, or None."""
    prev = (0.0, None)
    for m, l in s["curve"]:
        if l <= loss:
            if prev[1] is None:
                return m
            m0, l0 = prev
            return m0 + (m - m0) * (l0 - loss) / (l0 - l) if l0 != l else m
        prev = (m, l)
    return None


def _sig(delta, pb, pw, unit):
    return f"{delta:+.2f} {unit}; better in {100 * pb:.0f}% of bootstrap resamples, worse in {100 * pw:.0f}%"


def claims(a, by, ntok):
    """[(claim, verdict, evidence)] computed from the figures."""
    out = []
    tf, rnn = by["transformer"], by["lstm"]
    n = a.bootstrap
    unit = "nats/token" if ntok else "nats/sentence"
    scale = (ntok or len(tf["sent_nll"]))
    # 1. The Transformer trains faster.
    ratio = tf["train"]["tokens_per_s"] / rnn["train"]["tokens_per_s"]
    d, pb, pw = stats.nll_bootstrap(tf["sent_nll"], rnn["sent_nll"], n)
    v_loss = stats.verdict(d, pb, pw)
    reach = _time_to_reach(tf, rnn["dev_loss"])
    if ratio >= SPEED_MARGIN and v_loss == "better":
        verdict = "confirmed"
    elif ratio <= 1 / SPEED_MARGIN and v_loss == "worse":
        verdict = "refuted"
    else:
        verdict = "partly: " + ("more tokens/s" if ratio >= SPEED_MARGIN else
                                "fewer tokens/s" if ratio <= 1 / SPEED_MARGIN else "about the same tokens/s") + \
                  {"better": ", lower dev loss", "worse": ", higher dev loss", "tie": ", dev loss within noise"}[v_loss]
    ev = (f"training throughput {tf['train']['tokens_per_s']:.0f} vs {rnn['train']['tokens_per_s']:.0f} target "
          f"tokens/s ({ratio:.2f}x); dev loss after {a.minutes:g} min {tf['dev_loss']:.3f} vs {rnn['dev_loss']:.3f} "
          f"{unit} (difference {d / scale:+.3f}, Transformer lower in {100 * pb:.0f}% of resamples)")
    if reach is not None:
        ev += f"; the Transformer reached the LSTM's final dev loss after {reach:.1f} min"
    out.append(("The Transformer trains faster than the RNN encoder-decoder (seed 004)", verdict, ev))
    # 2. The Transformer translates better.
    parts, verdicts = [], []
    for beam in sorted(set(tf["eval"]["decode"]) & set(rnn["eval"]["decode"]), key=int):
        x, y = tf["eval"]["decode"][beam], rnn["eval"]["decode"][beam]
        d, pb, pw = stats.bleu_bootstrap(x["stats"], y["stats"], n)
        verdicts.append(stats.verdict(d, pb, pw))
        name = "greedy" if beam == "1" else f"beam {beam}"
        parts.append(f"{name}: BLEU {x['bleu']:.2f} vs {y['bleu']:.2f}, chrF {x['chrf']:.1f} vs {y['chrf']:.1f} "
                     f"({_sig(d, pb, pw, 'BLEU')})")
    verdict = ("confirmed" if all(v == "better" for v in verdicts) else
               "refuted" if all(v == "worse" for v in verdicts) else
               "not shown at this budget" if all(v == "tie" for v in verdicts) else "mixed")
    out.append((f"The Transformer translates better (dev BLEU, same {a.minutes:g} minutes of training)", verdict,
                "; ".join(parts)))
    # 3. Beam search beats greedy decoding.
    for s in (tf, rnn):
        dec = s["eval"]["decode"]
        if "1" not in dec or len(dec) < 2:
            continue
        parts, verdicts = [], []
        for beam in sorted((b for b in dec if b != "1"), key=int):
            d, pb, pw = stats.bleu_bootstrap(dec[beam]["stats"], dec["1"]["stats"], n)
            verdicts.append(stats.verdict(d, pb, pw))
            parts.append(f"beam {beam} {dec[beam]['bleu']:.2f} vs greedy {dec['1']['bleu']:.2f} BLEU "
                         f"({_sig(d, pb, pw, 'BLEU')}; length ratio {dec[beam]['len_ratio']:.2f} vs "
                         f"{dec['1']['len_ratio']:.2f})")
        verdict = ("confirmed" if all(v == "better" for v in verdicts) else
                   "refuted" if all(v == "worse" for v in verdicts) else
                   "not shown at this budget" if all(v == "tie" for v in verdicts) else "mixed")
        out.append((f"Beam search beats greedy decoding ({s['label']}, seed 003)", verdict, "; ".join(parts)))
    # 4. Scaling matters for large d_k.
    h1s, h1d, h4d = by["tf-h1-scaled"], by["tf-h1-dot"], by["tf-dot"]
    d_large, pb, pw = stats.nll_bootstrap(h1s["sent_nll"], h1d["sent_nll"], n)  # > 0: scaled lower
    v_large = stats.verdict(d_large, pb, pw)
    m = h1s["train"]["minutes"]
    m_s, nll_s = _loss_at(tf, m)
    m_d, nll_d = _loss_at(h4d, m)
    d_small, pbs, pws = stats.nll_bootstrap(nll_s, nll_d, n)
    gap_large, gap_small = d_large / scale, d_small / scale
    if v_large == "better" and gap_large > gap_small:
        verdict = "confirmed"
    elif v_large == "better":
        verdict = "partly: unscaled dot is worse at d_k 256, but no more than at d_k 64"
    elif v_large == "worse":
        verdict = "refuted: unscaled dot did better at d_k 256"
    else:
        verdict = "not shown at this budget"
    ev = (f"after {m:.1f} min, dev loss with one head (d_k 256): dot {h1d['dev_loss']:.3f} vs scaled "
          f"{h1s['dev_loss']:.3f} {unit} (gap {gap_large:+.3f}, scaled lower in {100 * pb:.0f}% of resamples); "
          f"with 4 heads (d_k 64) at {m_s:.1f}/{m_d:.1f} min: dot {sum(nll_d) / scale:.3f} vs scaled "
          f"{sum(nll_s) / scale:.3f} (gap {gap_small:+.3f}, scaled lower in {100 * pbs:.0f}%)")
    out.append(("Scaling by 1/sqrt(d_k) matters for large d_k (seed 004)", verdict, ev))
    return out


def _row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _clock_words(a):
    return "CPU time (one thread)" if a.clock == "cpu" and a.threads == 1 else (
        "CPU time" if a.clock == "cpu" else "wall time")


def _tables(a, specs, by, unit):
    L = []
    L.append("## Transformer vs LSTM with additive attention\n")
    L.append(_row(["model", "parameters", "steps", "epochs", "training tgt tokens/s", f"dev loss ({unit})",
                   "dev BLEU greedy", "chrF greedy", "best beam BLEU", "decoding words/s (greedy)"]))
    L.append(_row(["---"] * 10))
    for s in (by["transformer"], by["lstm"]):
        dec = s["eval"]["decode"]
        best = max(dec.items(), key=lambda kv: kv[1]["bleu"])
        L.append(_row([s["label"], f"{s['params'] / 1e6:.2f} M", s["train"]["steps"], s["train"]["epochs"],
                       f"{s['train']['tokens_per_s']:.0f}", f"{s['dev_loss']:.3f}", f"{dec['1']['bleu']:.2f}",
                       f"{dec['1']['chrf']:.2f}", f"{best[1]['bleu']:.2f} (beam {best[0]})",
                       f"{dec['1']['words_per_s']:.0f}"]))
    L.append("\n![dev loss](attention-report/loss_curves.svg)\n")
    L.append("## The four score functions (Transformer, 4 heads, d_k = 64)\n")
    L.append(_row(["score", "steps", "training tgt tokens/s", f"dev loss ({unit})", "dev BLEU greedy",
                   "chrF greedy", "decoding words/s"]))
    L.append(_row(["---"] * 7))
    for name, score in (("transformer", "scaled_dot"), ("tf-dot", "dot"), ("tf-additive", "additive"),
                        ("tf-bilinear", "bilinear")):
        s = by[name]
        g = s["eval"]["decode"]["1"]
        L.append(_row([score, s["train"]["steps"], f"{s['train']['tokens_per_s']:.0f}", f"{s['dev_loss']:.3f}",
                       f"{g['bleu']:.2f}", f"{g['chrf']:.2f}", f"{g['words_per_s']:.0f}"]))
    L.append("\n![BLEU](attention-report/bleu_bars.svg)\n")
    L.append("## Greedy vs beam search\n")
    L.append("`attn translate --beam 1` is greedy search (one hypothesis, argmax each step); beams use the "
             "GNMT length penalty alpha 0.6. Length ratio: words of the output over words of the references.\n")
    L.append(_row(["model", "search", "dev BLEU", "chrF", "length ratio", "CPU seconds" if a.clock == "cpu" else "seconds", "words/s", "sentences/s"]))
    L.append(_row(["---"] * 8))
    for s in (by["transformer"], by["lstm"]):
        for beam, d in sorted(s["eval"]["decode"].items(), key=lambda kv: int(kv[0])):
            L.append(_row([s["label"], "greedy" if beam == "1" else f"beam {beam}", f"{d['bleu']:.2f}",
                           f"{d['chrf']:.2f}", f"{d['len_ratio']:.2f}", f"{d['seconds']:.1f}",
                           f"{d['words_per_s']:.0f}", f"{d['sents_per_s']:.2f}"]))
    L.append("\n![beam](attention-report/beam_bars.svg)\n")
    L.append("## Dot vs scaled dot at a large d_k\n")
    m = by["tf-h1-scaled"]["train"]["minutes"]
    L.append(f"One head makes d_k = d_model = 256 (the default has 4 heads, d_k = 64). These two runs train "
             f"{by['tf-h1-scaled']['minutes']:g} minutes; the 4-head runs are read at their checkpoint nearest to "
             f"{m:.1f} minutes.\n")
    L.append(_row(["run", "d_k", "minutes", "step", f"dev loss ({unit})"]))
    L.append(_row(["---"] * 5))
    scale = by["_scale"]
    for name, dk in (("transformer", 64), ("tf-dot", 64), ("tf-h1-scaled", 256), ("tf-h1-dot", 256)):
        s = by[name]
        c = min(s["eval"]["curve"], key=lambda c: abs(c["minutes"] - m))
        L.append(_row([s["label"], dk, f"{c['minutes']:.1f}", c["step"], f"{sum(c['nll']) / scale:.3f}"]))
    L.append("\n![d_k](attention-report/dk_curves.svg)\n")
    return L


def _plots(out_dir, specs, by, unit):
    os.makedirs(out_dir, exist_ok=True)
    main = ["transformer", "lstm", "tf-dot", "tf-additive", "tf-bilinear"]
    with open(os.path.join(out_dir, "loss_curves.svg"), "w") as f:
        f.write(svg.line_chart([(by[n]["label"], by[n]["curve"], None) for n in main],
                               "Dev loss vs training time", "minutes of training", f"dev loss ({unit})"))
    with open(os.path.join(out_dir, "dk_curves.svg"), "w") as f:
        f.write(svg.line_chart([("d_k 64, scaled dot", by["transformer"]["curve"], None),
                                ("d_k 64, dot", by["tf-dot"]["curve"], None),
                                ("d_k 256, scaled dot", by["tf-h1-scaled"]["curve"], "6,4"),
                                ("d_k 256, dot", by["tf-h1-dot"]["curve"], "6,4")],
                               "Scaled vs unscaled dot product by d_k", "minutes of training", f"dev loss ({unit})"))
    with open(os.path.join(out_dir, "bleu_bars.svg"), "w") as f:
        labels = ["Transformer", "BiLSTM+add.", "TF dot", "TF additive", "TF bilinear"]
        f.write(svg.bar_chart([(l, [by[n]["eval"]["decode"]["1"]["bleu"]]) for l, n in zip(labels, main)],
                              ["greedy"], "Dev BLEU (greedy) at equal training time", "BLEU"))
    beams = sorted({b for n in ("transformer", "lstm") for b in by[n]["eval"]["decode"]}, key=int)
    with open(os.path.join(out_dir, "beam_bars.svg"), "w") as f:
        groups = [(by[n]["label"], [by[n]["eval"]["decode"].get(b, {}).get("bleu") for b in beams])
                  for n in ("transformer", "lstm")]
        f.write(svg.bar_chart(groups, ["greedy" if b == "1" else f"beam {b}" for b in beams],
                              "Dev BLEU: greedy vs beam search", "BLEU"))


def report(a, specs, files, info):
    by = _by_name(specs)
    ntok, counts, refs = _prepare(specs, files)
    unit = "nats/token" if ntok else "nats/sentence"
    by["_scale"] = ntok or len(refs)
    out_dir = a.out
    _plots(out_dir, specs, by, unit)
    cl = claims(a, by, ntok)
    L = ["# The attention family at equal training time (issue 5)\n",
         f"Generated by `bench/attention_report.py` on {info['date']} (attn {info['commit']}): {info['cpu']}, "
         f"{info['cores']} cores, {info['os']}. This invocation took {info['wall_minutes']:.0f} minutes.\n",
         "Reproduce with:\n", f"    {info['command']}\n",
         f"Every run trains for the same {_clock_words(a)} ({a.minutes:g} minutes; the two 1-head runs "
         f"{by['tf-h1-scaled']['minutes']:g}) with {a.threads} thread(s), {a.parallel} run(s) at a time, on "
         f"{'the first ' + str(a.train_lines) + ' lines of ' if a.train_lines else ''}`{a.data}` train, with one "
         f"shared {a.vocab}-piece SentencePiece model. No validation during training (it would eat the budget); a "
         f"checkpoint every {a.minutes / a.curve_points:.2g} minutes is scored afterwards on the first "
         f"{a.dev_sentences} dev sentences (teacher-forced NLL: the dev-loss curves), and the final weights "
         f"translate those sentences (BLEU and chrF: `attn bleu --chrf`, sacreBLEU's definitions). Decoding "
         f"speed counts output words (whitespace-separated, after detokenisation) over the {_clock_words(a)} of "
         f"`attn translate` with {a.threads} thread(s), model loading included.\n",
         "Training recipes: the Transformer is the default recipe (`attn train --help-config`: d_model 256, 3+3 "
         "layers, 4 heads, pre-LN, warm-up 400 times a linear decay to zero at the end of the budget, 2,048-token "
         "batches) with Noam factor 2 (`train.lr_factor=2`, the default when this report was made; it is 1 now); the score-function runs change only `model.score`, the d_k runs only "
         "`model.heads` (and the score). The LSTM: " + ", ".join(f"`{s}`" for s in by["lstm"]["sets"])
         + " (docs/rnn.md's recipe, with the same linear decay). Every run computes in fp32 "
         "(`train.precision=fp32`; the default, `auto`, would train in bf16 here), so the families are "
         "compared on the same arithmetic.\n"]
    L.append("## The seeds' claims, checked\n")
    L.append("Verdicts are computed from the figures below: a BLEU or dev-loss difference counts when at least "
             f"95% of {a.bootstrap} paired bootstrap resamples of the dev sentences agree on its sign; a speed "
             f"ratio counts beyond {SPEED_MARGIN:.2f}x. One seed per configuration.\n")
    for claim, verdict, ev in cl:
        L.append(f"- **{claim}: {verdict}.** {ev}.")
    L.append("")
    L += _tables(a, specs, by, unit)
    L.append("## Notes\n")
    if ntok:
        spread = (max(counts) - min(counts)) / ntok if counts else 0
        L.append(f"- Dev loss is nats per target token: the summed NLL from `attn score` over the {ntok:.0f} target "
                 f"tokens of these sentences (eos included), a count read from each run's end-of-training "
                 f"validation on the same weights (runs agree within {100 * spread:.2g}%).")
    tf_steps, warmup = by["transformer"]["train"]["steps"], info.get("warmup")
    if warmup and tf_steps < 2 * warmup:
        L.append(f"- The Transformer's run ended at step {tf_steps}, {'inside' if tf_steps <= warmup else 'soon after'} "
                 f"its {warmup}-step learning-rate warm-up (the Noam schedule peaks at step {warmup}): at this "
                 f"budget it is compared early in its training; a longer --minutes gives it room.")
    worst = max(abs(d["py_bleu"] - d["bleu"]) for s in specs for d in s["eval"]["decode"].values())
    L.append(f"- The bootstrap recomputes BLEU in Python from 13a-tokenised n-gram counts; it matches `attn bleu` "
             f"within {worst:.2g} BLEU on the full sets.")
    if a.clock == "cpu":
        L.append("- Budgets and speeds count each process's CPU time (user + system, `train.clock=cpu`), not wall "
                 "time: this machine is a virtual one whose host takes back a varying share of the cores (steal "
                 "time of 10-40% was seen), and runs share it two at a time, so wall time would hand out compute "
                 "unevenly. One thread per run, so a run's CPU time is the wall time it would take alone on a "
                 "quiet core. Throughput is target tokens over the run's CPU time (`tokens_seen / elapsed` of "
                 "train_log.jsonl).")
    else:
        L.append("- Timings are wall time on a shared 2-core machine; runs sharing the cores (--parallel 2) slow "
                 "each other somewhat, and the same for every run. Throughput is target tokens over the training "
                 "run's wall time (`tokens_seen / elapsed` of train_log.jsonl).")
    L.append("- Per-run figures (train_log.jsonl, checkpoints, hypotheses, report_eval.json) are in "
             f"`{a.work}/<run>/`.")
    with open(out_dir + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    _figures_json(os.path.join(out_dir, "figures.json"), specs, cl, info)


def _figures_json(path, specs, cl, info):
    """The report's numbers in one file (no per-sentence lists), for whoever reads them next."""
    runs = {}
    for s in specs:
        runs[s["name"]] = {
            "label": s["label"], "sets": s["sets"], "minutes": s["minutes"], "parameters": s["params"],
            "train": s["train"], "dev_loss": s["dev_loss"], "curve": s["curve"],
            "decode": {b: {k: d[k] for k in ("bleu", "chrf", "seconds", "words", "words_per_s", "len_ratio")}
                       for b, d in s["eval"]["decode"].items()}}
    with open(path, "w") as f:
        json.dump({"info": info, "runs": runs, "claims": [{"claim": c, "verdict": v, "evidence": e}
                                                          for c, v, e in cl]}, f, indent=1)
