#!/usr/bin/python3
"""Cost as work grows (issue 32): attn's decoding against CTranslate2's as one dimension of the work
grows and the others stay at a centre point, on the same model, sources and threads.

  /usr/bin/python3 bench/cost_growth.py [--build build] [--threads 2]
        [--axes source,batch,beam,model] [--repeats 2] [--min-seconds 2] [--max-len 32] [--quick]
        [--model base] [--batch 32] [--beam 1] [--src-len 32] [--points AXIS=V,V,...]
        [--work /tmp/attn-cost-growth] [--out-json docs/cost-growth/results.json] [--svg-dir docs/cost-growth]
        [--ct2-python /work/venv-ct2/bin/python] [--policies attn=default,ct2=default/PASSIVE]

Measured: output tokens/s of fp32 decoding (attn's build/bench_translate, KV cache, against
CTranslate2 through bench/ct2_bench.py, compute type float32), alpha 0, at most --max-len output
tokens, on pre-LN models with random weights made by torch_ref.py exactly as compare.py makes its
model (seed 0, untied output projection, vocabulary 8000; compare.make_model). The centre point is
the base model, batch 32 (CTranslate2 runs batches of 16 slowly on the Zen 5, docs/performance.md),
greedy, sources of 32 ids; each axis moves one of them:
  source  8, 16, 32, 64, 128, 256 ids a source (random ids, the last one eos: exactly that many
          encoder positions)
  batch   1, 2, 4, 8, 16, 32, 64 sentences decoded together
  beam    1, 2, 4, 8 hypotheses a sentence
  model   small (d256, 3+3 layers, 4 heads, d_ff 1024), base (d512, 6+6, h8, 2048), big (d1024, 6+6, h16, 4096)
Every cell first translates one or a few batches with each system to time a sentence, then takes a
whole number of batches of sentences, enough that the faster system runs --min-seconds (2) in its
timed loop. Then the two systems run in turn (A B A B, compare.alternate, CTranslate2 under each of
its --policies, scored by the better as in compare.py), and the median of --repeats (2) counts. The
centre cell is measured once and shared by the axes. attn's and CTranslate2's output ids are compared
per cell (the fraction of sentences identical is reported; a difference does not fail the run).
Model GFLOP/s count the matrix products of cached decoding (compare.decode_flops) over each system's
own outputs.

Writes --out-json (all cells, written again after each one), one SVG per axis in --svg-dir
(<axis>.svg: tokens/s against the axis value on a log2 scale, and below it tokens/s relative to the
axis's first point, i.e. how the cost of a token grows), and prints a markdown table per axis.
--quick: 3 points per axis (2 for beam and model), 0.5 s cells, 1 repeat. On a machine where other
benchmarks run, run it under their lock (`flock LOCKFILE /usr/bin/python3 bench/cost_growth.py`); it
takes none itself.
"""
import argparse
import datetime
import json
import math
import os
import random
import subprocess
import sys
import time
from xml.sax.saxutils import escape

import compare
from attention_report_svg import FONT, PALETTE, Frame, nice_ticks, _legend, _y_axis

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODELS = {
    "small": compare.CONFIGS["small"],
    "base": compare.CONFIGS["base"],
    "big": dict(d=1024, layers=6, heads=16, ff=4096, vocab=8000),
}
AXES = {
    "source": ("src_len", [8, 16, 32, 64, 128, 256], "source length (ids, eos included)"),
    "batch": ("batch", [1, 2, 4, 8, 16, 32, 64], "batch (sentences decoded together)"),
    "beam": ("beam", [1, 2, 4, 8], "beam size (1: greedy)"),
    "model": ("model", ["small", "base", "big"], "model (placed by d_model)"),
}
QUICK = {"source": [8, 32, 128], "batch": [1, 4, 16], "beam": [1, 4], "model": ["small", "base"]}
SYSTEMS = ("attn", "ct2")
NAMES = {"attn": "attn fp32", "ct2": "CTranslate2 fp32"}
MAX_SENTENCES = 20000


def model_label(name):
    c = MODELS[name]
    return "%s d%d %d+%d" % (name, c["d"], c["layers"], c["layers"])


def parameters(c):
    """Weights of the model (matrices and embeddings; biases and norms left out)."""
    d, f, L, V = c["d"], c["ff"], c["layers"], c["vocab"]
    return L * (4 * d * d + 2 * d * f) + L * (8 * d * d + 2 * d * f) + 3 * V * d


def write_sources(work, src_len, n):
    """n random sources of exactly src_len ids (src_len - 1 random ids, then eos), the same first
    sentences for every n; returns the file."""
    rng = random.Random(1000 + src_len)
    path = os.path.join(work, "src_len%d_n%d.ids" % (src_len, n))
    if not os.path.exists(path):
        with open(path, "w") as f:
            for _ in range(n):
                f.write(" ".join(str(rng.randrange(3, 8000)) for _ in range(src_len - 1)) + " 2\n")
    return path


def commands(a, cell, dirs, src, tag, repeat):
    """{"attn": bench_translate, "ct2": ct2_bench.py translate} on the cell's settings, translating the
    sources `repeat` times in the process (the best time counts); their output files by system."""
    common = ["--src", src, "--beam", str(cell["beam"]), "--batch", str(cell["batch"]), "--max-len", str(a.max_len),
              "--threads", str(a.threads), "--repeat", str(repeat)]
    outs = {s: os.path.join(a.work, "out", "%s_%s.ids" % (tag, s)) for s in SYSTEMS}
    model, ct2 = dirs[cell["model"]]
    cmds = {"attn": [os.path.join(a.build, "bench_translate"), "--model", model, "--out", outs["attn"]] + common,
            "ct2": [a.ct2_python, os.path.join(HERE, "ct2_bench.py"), "translate", "--model", ct2,
                    "--out", outs["ct2"]] + common}
    return cmds, outs


def cell_tag(cell):
    return "%s_b%d_k%d_s%d" % (cell["model"], cell["batch"], cell["beam"], cell["src_len"])


def calibrate(a, env, cell, dirs):
    """Sentences for the cell: a whole number of batches that keeps the faster system busy for
    --min-seconds (a quarter more, as the first batches of a short run are the slowest), judged from
    one run of each on at least 8 sentences."""
    b = cell["batch"]
    n0 = b * max(1, math.ceil(8 / b))
    cmds, _ = commands(a, cell, dirs, write_sources(a.work, cell["src_len"], n0), cell_tag(cell) + "_cal", 1)
    per_sentence = min(compare.run_json(cmd, env)["seconds"] for cmd in cmds.values()) / n0
    batches = math.ceil(1.25 * a.min_seconds / max(per_sentence, 1e-6) / b)
    return max(n0, min(MAX_SENTENCES // b * b, batches * b))


def system_result(runs, c, cell, outs_of_system, n):
    """Median tokens/s of the runs, their spread, and model GFLOP/s from the system's own outputs."""
    ids = compare.read_ids(outs_of_system)
    tokens = sum(len(r) for r in ids)
    flops = compare.decode_flops(c, [cell["src_len"]] * n, [len(r) for r in ids], cell["beam"])
    tps = compare.median_of(runs)
    return dict(tokens_per_s=tps, runs=[r["tokens_per_s"] for r in runs], seconds=[r["seconds"] for r in runs],
                tokens=tokens, gflops=tps * flops / max(tokens, 1) / 1e9, peak_rss_mb=max(r["peak_rss_mb"] for r in runs))


def measure_cell(a, env, cell, dirs):
    """One cell: calibrate, alternate the systems --repeats times, compare outputs."""
    n = calibrate(a, env, cell, dirs)
    tag = cell_tag(cell)
    cmds, outs = commands(a, cell, dirs, write_sources(a.work, cell["src_len"], n), tag, a.translate_repeats)
    notes = []
    t0 = time.time()
    every = compare.alternate(cmds, env, a.repeats, a.policies)
    runs = compare.best_policy(every, notes, tag)
    c = MODELS[cell["model"]]
    res = dict(cell, sentences=n, max_len=a.max_len, threads=a.threads, wall_s=round(time.time() - t0, 1), notes=notes,
               policy_medians={kp: compare.median_of(rs) for kp, rs in every.items()})
    for s in SYSTEMS:
        res[s] = system_result(runs[s], c, cell, outs[s], n)
    same, total, prefix = compare.agreement(compare.read_ids(outs["attn"]), compare.read_ids(outs["ct2"]))
    res.update(ratio=res["attn"]["tokens_per_s"] / res["ct2"]["tokens_per_s"], identical=same / max(total, 1),
               prefix_agreement=prefix)
    shortest = min(min(res[s]["seconds"]) for s in SYSTEMS)
    if shortest < 0.5 * a.min_seconds:  # the calibration ran on a slower machine than the runs (a load that went away)
        notes.append("short: a timed run took %.2f s, under half of --min-seconds" % shortest)
    print("  %s: %d sentences, attn %s, ct2 %s tok/s, identical %.2f%s" % (
        tag, n, [round(x, 1) for x in res["attn"]["runs"]], [round(x, 1) for x in res["ct2"]["runs"]],
        res["identical"], "".join("; " + x for x in notes)), file=sys.stderr)
    return res


def x_of(axis, value):
    return math.log2(MODELS[value]["d"] if axis == "model" else value)


def tick_label(axis, value):
    return model_label(value) if axis == "model" else str(value)


def axis_name(axis):
    """'source length', 'batch', 'beam size', 'model'."""
    return AXES[axis][2].split(" (")[0]


def _panel_lines(f, xs, ys_by_system, colors):
    out = []
    for s, c in zip(SYSTEMS, colors):
        d = " ".join("%.1f,%.1f" % (f.px(x), f.py(y)) for x, y in zip(xs, ys_by_system[s]))
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (d, c))
        out += ['<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (f.px(x), f.py(y), c)
                for x, y in zip(xs, ys_by_system[s])]
    return out


def _x_axis(f, axis, values, xs, label):
    out = []
    for v, x in zip(values, xs):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>' % (f.px(x), f.y1, f.px(x), f.y1 + 4))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (f.px(x), f.y1 + 17, escape(tick_label(axis, v))))
    if label:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % ((f.x0 + f.x1) / 2, f.y1 + 34, escape(label)))
    return out


def axis_svg(axis, cells, caption, width=820, height=560):
    """Tokens/s of both systems against the axis value (log2 scale); below, each relative to its
    first point. Hand-made SVG in bench/attention_report_svg.py's style."""
    _, _, label = AXES[axis]
    values = [r["value"] for r in cells]
    xs = [x_of(axis, v) for v in values]
    tps = {s: [r[s]["tokens_per_s"] for r in cells] for s in SYSTEMS}
    rel = {s: [y / tps[s][0] for y in tps[s]] for s in SYSTEMS}
    xlo, xhi = min(xs) - 0.35, max(xs) + 0.35
    colors = PALETTE[:len(SYSTEMS)]
    yt = nice_ticks(0, max(max(v) for v in tps.values()) * 1.08)
    top = Frame(width, height, xlo, xhi, yt[0], yt[-1], left=70, right=170, top=40, bottom=height - 320)
    rt = nice_ticks(0, max(1.0, max(max(v) for v in rel.values())) * 1.1, 3)
    bot = Frame(width, height, xlo, xhi, rt[0], rt[-1], left=70, right=170, top=368, bottom=height - 470)
    title = "Decoding cost as the %s grows: attn vs CTranslate2 (fp32)" % axis_name(axis)
    first = tick_label(axis, values[0]) if axis == "model" else "%s %s" % (axis_name(axis), values[0])
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="12">'
           % (width, height, width, height, FONT), '<rect width="%d" height="%d" fill="white"/>' % (width, height),
           '<text x="%.1f" y="22" text-anchor="middle" font-size="14" font-weight="bold">%s</text>'
           % (width / 2, escape(title))]
    out += _y_axis(top, yt, "output tokens/s") + _x_axis(top, axis, values, xs, "")
    out += _panel_lines(top, xs, tps, colors)
    out += _legend(top, [NAMES[s] for s in SYSTEMS], colors)
    out += _y_axis(bot, rt, "relative to first")
    out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888" stroke-dasharray="4 3"/>'
               % (bot.x0, bot.py(1.0), bot.x1, bot.py(1.0)))
    out += _x_axis(bot, axis, values, xs, label + ", log2 scale")
    out += _panel_lines(bot, xs, rel, colors)
    out.append('<text x="%d" y="%d" font-size="11" fill="#333">tokens/s relative to the first point (%s): below 1, '
               'a token costs more</text>' % (bot.x0, bot.y0 - 8, escape(first)))
    for i, line in enumerate(caption):
        out.append('<text x="%d" y="%d" font-size="11" fill="#555">%s</text>' % (12, height - 30 + 15 * i, escape(line)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def markdown_table(axis, cells):
    _, _, label = AXES[axis]
    lines = ["", "### %s" % label, "",
             "| %s | sentences | attn tok/s | CT2 tok/s | attn/CT2 | attn GFLOP/s | CT2 GFLOP/s | identical |" % axis,
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in cells:
        lines.append("| %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.0f%% |" % (
            tick_label(axis, r["value"]), r["sentences"], r["attn"]["tokens_per_s"], r["ct2"]["tokens_per_s"],
            r["ratio"], r["attn"]["gflops"], r["ct2"]["gflops"], 100 * r["identical"]))
    return "\n".join(lines)


def machine(a):
    cpu = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    ver = subprocess.run([a.ct2_python, "-c", "import ctranslate2; print(ctranslate2.__version__)"],
                         capture_output=True, text=True).stdout.strip()
    git = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True, text=True)
    return dict(cpu=cpu, cores=os.cpu_count(), threads=a.threads, ctranslate2=ver, attn=git.stdout.strip(),
                date=datetime.date.today().isoformat())


def caption(a, m):
    centre = "centre: %s, batch %d, %s, source %d ids, at most %d output tokens" % (
        model_label(a.model), a.batch, "greedy" if a.beam == 1 else "beam %d" % a.beam, a.src_len, a.max_len)
    return ["%s (%d cores), %d thread%s; attn %s, CTranslate2 %s; %s" % (
        m["cpu"], m["cores"], m["threads"], "" if m["threads"] == 1 else "s", m["attn"], m["ctranslate2"], m["date"]),
            "%s; %s, >= %.1f s each" % (centre, "median of %d alternating runs" % a.repeats if a.repeats > 1
                                        else "one run of each", a.min_seconds)]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--axes", default="source,batch,beam,model")
    p.add_argument("--repeats", type=int, default=2, help="alternating runs of each system per cell; the median counts")
    p.add_argument("--min-seconds", type=float, default=2.0, help="timed seconds of the faster system per run, at least")
    p.add_argument("--max-len", type=int, default=32, help="output tokens per sentence at most")
    p.add_argument("--translate-repeats", type=int, default=1,
                   help="translations of the sources in each process (bench_translate/ct2_bench --repeat; the best counts)")
    p.add_argument("--quick", action="store_true", help="3 points per axis (2 for beam, model), 0.5 s cells, 1 repeat")
    p.add_argument("--model", default="base", choices=sorted(MODELS), help="centre point's model")
    p.add_argument("--batch", type=int, default=32, help="centre point's batch")
    p.add_argument("--beam", type=int, default=1, help="centre point's beam")
    p.add_argument("--src-len", type=int, default=32, help="centre point's source length")
    p.add_argument("--points", action="append", default=[], metavar="AXIS=V,V,...", help="an axis's values instead of "
                   "the defaults, e.g. --points batch=1,4 (repeatable)")
    p.add_argument("--work", default="/tmp/attn-cost-growth", help="models, sources and outputs (models are reused)")
    p.add_argument("--out-json", default=os.path.join(REPO, "docs", "cost-growth", "results.json"))
    p.add_argument("--svg-dir", default=os.path.join(REPO, "docs", "cost-growth"))
    p.add_argument("--ct2-python", default=os.path.join(os.environ.get("ATTN_CT2_VENV", "/work/venv-ct2"), "bin", "python"))
    p.add_argument("--policies", default="attn=default,ct2=default/PASSIVE",
                   help="OMP_WAIT_POLICY of each system as in compare.py; a system given several runs under each")
    a = p.parse_args()
    if a.quick:
        a.repeats, a.min_seconds = 1, min(a.min_seconds, 0.5)
    a.axes = [x for x in a.axes.split(",") if x]
    points = {ax: list(QUICK[ax] if a.quick else AXES[ax][1]) for ax in AXES}
    for text in a.points:
        ax, _, vals = text.partition("=")
        if ax not in AXES:
            sys.exit("--points: unknown axis %r (one of %s)" % (ax, ", ".join(AXES)))
        points[ax] = [v if ax == "model" else int(v) for v in vals.split(",") if v]
    bad = [ax for ax in a.axes if ax not in AXES] + ["model " + v for v in points["model"] if v not in MODELS]
    if bad or not os.path.exists(a.ct2_python):
        sys.exit("bad --axes/--points %s, or no CTranslate2 python %s" % (bad, a.ct2_python))
    a.points = points
    a.policies = compare.parse_policies(a.policies)
    a.work = os.path.abspath(a.work)
    return a


def main():
    a = parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    os.makedirs(os.path.join(a.work, "out"), exist_ok=True)
    centre = dict(model=a.model, batch=a.batch, beam=a.beam, src_len=a.src_len)
    models = {centre["model"]} | (set(a.points["model"]) if "model" in a.axes else set())
    dirs = {m: compare.make_model(a.work, m, MODELS[m], env, a.ct2_python) for m in sorted(models)}
    m = machine(a)
    result = dict(machine=m, centre=centre, max_len=a.max_len, repeats=a.repeats, min_seconds=a.min_seconds,
                  policies={s: a.policies[s] for s in SYSTEMS}, axes={},
                  models={k: dict(MODELS[k], parameters=parameters(MODELS[k])) for k in models})
    measured, t0 = {}, time.time()
    os.makedirs(os.path.dirname(os.path.abspath(a.out_json)), exist_ok=True)
    for axis in a.axes:
        key = AXES[axis][0]
        cells = []
        for v in a.points[axis]:
            cell = dict(centre, **{key: v})
            tag = cell_tag(cell)
            if tag not in measured:
                measured[tag] = measure_cell(a, env, cell, dirs)
            cells.append(dict(measured[tag], axis=axis, value=v))
            result["axes"][axis] = cells
            result["elapsed_s"] = round(time.time() - t0, 1)
            with open(a.out_json, "w") as f:
                json.dump(result, f, indent=1)
        os.makedirs(a.svg_dir, exist_ok=True)
        with open(os.path.join(a.svg_dir, axis + ".svg"), "w") as f:
            f.write(axis_svg(axis, cells, caption(a, m)))
    print("%s; %.0f s" % (caption(a, m)[0], time.time() - t0))
    for axis in a.axes:
        print(markdown_table(axis, result["axes"][axis]))
    print("\nwrote %s and %s" % (a.out_json, ", ".join(os.path.join(a.svg_dir, ax + ".svg") for ax in a.axes)))


if __name__ == "__main__":
    main()
