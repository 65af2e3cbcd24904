#!/usr/bin/python3
"""attn against PyTorch and CTranslate2 on the same configurations, the same threads, in one run.

  /usr/bin/python3 bench/compare.py [--build build] [--threads 2]
        [--only train,translate,classifier,bf16loss] [--configs small,base] [--repeats 2] [--quick] [--max-len 32] [--translate-repeats 3]
        [--work /tmp/attn-compare] [--ct2-python /work/venv-ct2/bin/python]
        [--policies attn=default,torch=PASSIVE,ct2=default/PASSIVE] [--builds NAME=DIR,...]

Prints a table of ratios (attn / other; > 1 means attn is faster):
  train       target tokens/s of full optimizer steps, 128 x 32 source + 128 x 32 target tokens,
              base (d512, 6+6, h8, d_ff 2048) and small (d256, 3+3, h4, d_ff 1024), vocabulary 8000:
              bench_train vs bench/torch_bench.py train (torch_ref.py's model).
  translate   output tokens/s, greedy and beam 4, batch 1 (8 sentences) and 32, at most --max-len
              (32) tokens, alpha 0, on a
              pre-LN base model made by torch_ref.py (random weights, seed 0, untied output projection so that the output varies) and 32 random
              sources of 8-30 ids: bench_translate (KV cache) vs torch_bench.py translate (no
              cache, the prefix decoded again at every step) vs CTranslate2 (ct2_bench.py, fp32,
              and int8 for reference), with the outputs compared token by token with attn's. attn
              and CTranslate2 translate the sources --translate-repeats (3) times in each process and
              report the best time (the same rule for both).
  classifier  samples/s of seed 002's classifier, bench_classifier vs tests/classify/torch_classifier.py --bench
  bf16 / int8 rows: attn's bf16 mixed-precision training (and classifier) against PyTorch's fp32, and
              attn's int8 decoding against CTranslate2's int8 (--no-bf16, --no-int8 to skip them).
              (skipped when either is missing).
  bf16loss    bf16 mixed precision's accuracy: `attn train`'s default configuration on the shipped
              corpus, fp32 and bf16 from the same seed for --bf16-steps (300) steps, dev loss of both
              (bench/bf16_loss.py; skipped with --no-bf16).
For every run: peak RSS, and model FLOPs/s as a fraction of the fp32 GEMM peak measured in this
run (bench_train --peak-only; the mean of a measurement before and after). Batch-1 decoding, whose
limit is memory bandwidth rather than the GEMM peak, also gets the weight bytes it reads per second
as a fraction of the machine's bandwidth (%bw: STREAM's triad from bench_bandwidth, measured before
and after like the peak; bench/limits.py says what is counted). Training, where a run
of attn and PyTorch takes 10-20 minutes and the machine's speed drifts by a quarter in that time,
measures the peak inside every attn process as well, just before and after its timed steps
(bench_train --peak): attn's fraction there is the median of its runs' fractions against their own
peaks, and the notes give the fraction against the run's mean peak beside it. Model FLOPs count the
matrix products of the model as written (training: 3x the forward; translation: the FLOPs of
cached decoding, K hypotheses per output token for beam K, plus the encoder), the same count
for every system. The runs of the systems alternate (A B A B) and the median of --repeats is
taken, so that a machine whose load drifts moves both sides.

Every system runs under the OpenMP wait policy that is its best on this machine (--policies):
PyTorch with OMP_WAIT_POLICY=PASSIVE, attn with libgomp's default (threads spin a while between
parallel regions, then sleep), CTranslate2 under both, scored by the better (the notes say which).
On the Sapphire Rapids VM (2026-11-22) PASSIVE cost attn 1.5-2x (docs/performance.md): a sleeping
thread's virtual CPU takes long to wake, and attn runs many short parallel regions. The GEMM peak is
measured under attn's policy.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import bf16_loss
import limits

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TORCH_PY = "/usr/bin/python3"
CONFIGS = {
    "base": dict(d=512, layers=6, heads=8, ff=2048, vocab=8000),
    "small": dict(d=256, layers=3, heads=4, ff=1024, vocab=8000),
}


def run_json(cmd, env):
    t0 = time.time()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    r = json.loads(line)
    r["wall"] = time.time() - t0
    return r


def forward_flops_train(c, B, S, T):
    """Matrix-product FLOPs of one forward pass over B sentences of S source and T target tokens."""
    d, f, L, V = c["d"], c["ff"], c["layers"], c["vocab"]
    enc = L * (2 * B * S * (4 * d * d + 2 * d * f) + 4 * B * S * S * d)
    dec = L * (2 * B * T * (6 * d * d + 2 * d * f) + 2 * B * S * 2 * d * d + 4 * B * T * T * d + 4 * B * T * S * d)
    return enc + dec + 2 * B * T * d * V


def decode_flops(c, src_lens, out_lens, beam):
    """Cached-decoding FLOPs: the encoder and cross keys/values once per sentence, then per output
    token and hypothesis one decoder step (its attention over the positions so far) and the generator."""
    d, f, L, V = c["d"], c["ff"], c["layers"], c["vocab"]
    total = 0
    for S, n in zip(src_lens, out_lens):
        total += forward_flops_train(dict(c, vocab=0), 1, S, 0)  # encoder + cross K/V
        for t in range(1, n + 1):
            total += beam * (L * (2 * (6 * d * d + 2 * d * f) + 4 * t * d + 4 * S * d) + 2 * d * V)
    return total


def system_of(key):
    """The system a command key runs: attn_int8 -> attn, attn~before -> attn, ct2_int8 -> ct2, torch -> torch."""
    return key.split("~")[0].split("_")[0]


def with_builds(a, cmds):
    """cmds with every attn command run again by each build of --builds (key "attn...~NAME"): the same
    program and arguments from that build's directory, its --out file suffixed with ~NAME."""
    for key in [k for k in cmds if system_of(k) == "attn"]:
        for name, path in a.builds.items():
            cmd = [os.path.join(path, os.path.basename(cmds[key][0]))] + cmds[key][1:]
            if "--out" in cmd:
                i = cmd.index("--out") + 1
                cmd[i] += "~" + name
            cmds["%s~%s" % (key, name)] = cmd
    return cmds


def compare_builds(builds_table, task, runs, key="tokens_per_s"):
    """One row per attn command run by another build: this build's median, the other's, their ratio."""
    for k, rs in runs.items():
        if "~" in k:
            base = k.split("~")[0]
            builds_table.append((task, base, k.split("~")[1], median_of(runs[base], key), median_of(rs, key)))


def policy_env(env, policy):
    """env with OMP_WAIT_POLICY set to `policy`, or removed for 'default' (libgomp's own: spin a while, then sleep)."""
    e = dict(env)
    e.pop("OMP_WAIT_POLICY", None)
    if policy != "default":
        e["OMP_WAIT_POLICY"] = policy
    return e


def alternate(cmds, env, repeats, policies, run=run_json):
    """Runs every command `repeats` times, in turn (A B C A B C ...), once under each OpenMP wait policy of
    its system (policies: {system: [policy, ...]}), each by run(cmd, env); returns the runs per command and
    policy, keyed "key@policy"."""
    variants = [(k, pol) for k in cmds for pol in policies.get(system_of(k), ["default"])]
    runs = {"%s@%s" % v: [] for v in variants}
    for r in range(repeats):
        for k, pol in (variants if r % 2 == 0 else list(reversed(variants))):
            runs["%s@%s" % (k, pol)].append(run(cmds[k], policy_env(env, pol)))
    return runs


def best_policy(runs, notes, task, key="tokens_per_s"):
    """For every command, the runs of the policy with the highest median; the choice goes to the notes
    when a command ran under more than one."""
    best = {}
    for kp, rs in runs.items():
        k, pol = kp.split("@")
        if k not in best or median_of(rs, key) > median_of(best[k][1], key):
            best[k] = (pol, rs)
    for k, (pol, rs) in best.items():
        tried = ["%s %.1f" % (kp.split("@")[1], median_of(r, key)) for kp, r in runs.items() if kp.split("@")[0] == k]
        if len(tried) > 1:
            notes.append("%s: %s under OMP_WAIT_POLICY %s (medians: %s)" % (task, k, pol, ", ".join(tried)))
    return {k: rs for k, (pol, rs) in best.items()}


def parse_policies(text):
    out = {"attn": ["default"], "torch": ["PASSIVE"], "ct2": ["default"]}
    for part in filter(None, text.split(",")):
        system, _, pols = part.partition("=")
        out[system] = [p if p == "default" else p.upper() for p in pols.split("/")]
        if system not in ("attn", "torch", "ct2") or not all(p in ("default", "PASSIVE", "ACTIVE") for p in out[system]):
            sys.exit("--policies: bad entry %r (SYSTEM=P[/P...], SYSTEM attn, torch or ct2, P default, PASSIVE or ACTIVE)"
                     % part)
    return out


def median_of(runs, key="tokens_per_s"):
    return statistics.median(r[key] for r in runs)


def row(table, task, a, others, flops, peak):
    """a: attn's runs; others: {name: runs}. flops: model FLOPs per unit of the rate. peak: the run's
    GEMM peak (main() rescales it to the mean of the peaks before and after), unless attn's runs
    measured their own (bench_train --peak, "gemm_peak_gflops" > 0): then attn's fraction is the
    median of its runs' fractions, each against the peak measured in its own process, and the other
    systems' fractions are against the median of those peaks."""
    ra = median_of(a)
    cells = {"task": task, "attn": ra, "attn_rss": max(r["peak_rss_mb"] for r in a)}
    if all(r.get("gemm_peak_gflops", 0) > 0 for r in a):
        cells["in_run_peak"] = statistics.median(r["gemm_peak_gflops"] for r in a)
        cells["attn_peak"] = statistics.median(r["tokens_per_s"] * flops / 1e9 / r["gemm_peak_gflops"] for r in a)
        cells["attn_peak_of_run_peak"] = ra * flops / 1e9 / peak  # rescaled by main() like the others
        peak = cells["in_run_peak"]
    else:
        cells["attn_peak"] = ra * flops / 1e9 / peak
    for name, runs in others.items():
        rb = median_of(runs)
        cells[name] = rb
        cells[name + "_ratio"] = ra / rb
        cells[name + "_rss"] = max(r["peak_rss_mb"] for r in runs)
        cells[name + "_peak"] = rb * flops / 1e9 / peak
    table.append(cells)


def measure_peak(build, threads, env):
    return run_json([os.path.join(build, "bench_train"), "--peak-only", "--threads", str(threads)], env)["gemm_peak_gflops"]


def bench_train(a, env, table, peak, notes):
    for name in a.configs.split(","):
        steps = {"small": 4, "base": 2}[name] if a.quick else {"small": 8, "base": 3}[name]
        common = ["--config", name, "--threads", str(a.threads), "--steps", str(steps), "--warmup", "1"]
        cmds = {"attn": [os.path.join(a.build, "bench_train")] + common + ["--peak"],
                "torch": [TORCH_PY, os.path.join(HERE, "torch_bench.py"), "train"] + common}
        if a.bf16:
            cmds["attn_bf16"] = cmds["attn"] + ["--precision", "bf16"]
        runs = best_policy(alternate(with_builds(a, cmds), env, a.repeats, a.policies), notes, "train %s" % name)
        compare_builds(a.builds_table, "train %s (tgt tok/s)" % name, runs)
        flops_per_token = 3 * forward_flops_train(CONFIGS[name], 128, 32, 32) / (128 * 32)
        row(table, "train %s (tgt tok/s)" % name, runs["attn"], {"torch": runs["torch"]}, flops_per_token, peak)
        if a.bf16:  # bf16 mixed precision against PyTorch's fp32; %peak still against the fp32 peak
            row(table, "train %s bf16 vs torch fp32" % name, runs["attn_bf16"], {"torch": runs["torch"]},
                flops_per_token, peak)
        print("  train %s: %s; attn's in-process peaks %s" % (
            name, {k: [round(r["tokens_per_s"]) for r in v] for k, v in runs.items()},
            [(r["gemm_peak_before"], r["gemm_peak_after"]) for r in runs["attn"]]), file=sys.stderr)


def make_model(work, name, c, env, ct2_python):
    """The pre-LN model `name` of configuration c (random weights, seed 0, untied output projection so that
    the output varies), made by torch_ref.py in work/<name>_pre_ln unless there already, and its
    CTranslate2 conversion in work/<name>_pre_ln_ct2 (when ct2_python is given). Returns the two directories."""
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "%s_pre_ln" % name)
    if not os.path.exists(os.path.join(model, "weights.npz")):
        subprocess.run([
            TORCH_PY, os.path.join(REPO, "..", "shared", "reference", "torch_ref.py"), "make", "--out", model,
            "--seed", "0", "--src-vocab", str(c["vocab"]), "--tgt-vocab", str(c["vocab"]), "--d-model", str(c["d"]),
            "--heads", str(c["heads"]), "--layers", str(c["layers"]), "--ff", str(c["ff"]), "--norm-first",
            "--no-share"], env=env, check=True)
    ct2 = os.path.join(work, "%s_pre_ln_ct2" % name)
    if ct2_python and not os.path.exists(os.path.join(ct2, "model.bin")):
        subprocess.run([ct2_python, os.path.join(HERE, "ct2_bench.py"), "convert", "--model", model, "--out", ct2],
                       env=env, check=True)
    return model, ct2


def prepare_translation(a, env):
    model, ct2 = make_model(a.work, "base", CONFIGS["base"], env, a.ct2_python)
    import random
    rng = random.Random(3)
    srcs = [[rng.randrange(3, 8000) for _ in range(rng.randrange(8, 31))] + [2] for _ in range(32)]
    paths = {}
    for n in (2, 8, 32):
        paths[n] = os.path.join(a.work, "src%d.ids" % n)
        with open(paths[n], "w") as f:
            for s in srcs[:n]:
                f.write(" ".join(map(str, s)) + "\n")
    return model, ct2, paths, srcs


def read_ids(path):
    return [[int(t) for t in line.split()] for line in open(path)]


def agreement(ref, other):
    """(sentences equal, tokens equal up to the first difference / tokens of ref)."""
    same = sum(r == o for r, o in zip(ref, other))
    prefix = 0
    for r, o in zip(ref, other):
        for x, y in zip(r, o):
            if x != y:
                break
            prefix += 1
    return same, len(ref), prefix / max(1, sum(len(r) for r in ref))


def bench_translate(a, env, table, peak, notes):
    model, ct2, paths, srcs = prepare_translation(a, env)
    for beam in (1, 4):
        for batch in (1, 32):
            n = 32 if batch > 1 else 2 if a.quick else 8  # sentences
            src = paths[n]
            outs = {k: os.path.join(a.work, "out_%s_b%d_k%d.ids" % (k, batch, beam))
                    for k in ("attn", "torch", "ct2", "ct2_int8")}
            common = ["--src", src, "--beam", str(beam), "--batch", str(batch), "--max-len", str(a.max_len), "--threads",
                      str(a.threads)]
            # attn and CTranslate2 each translate the sources --translate-repeats times in one process and
            # report the best (the same rule for both: a few-tenths-of-a-second run is at the mercy of a burst)
            rep = ["--repeat", str(a.translate_repeats)]
            cmds = {"attn": [os.path.join(a.build, "bench_translate"), "--model", model, "--out", outs["attn"]] + common
                    + rep,
                    "torch": [TORCH_PY, os.path.join(HERE, "torch_bench.py"), "translate", "--model", model,
                              "--out", outs["torch"]] + common}
            if a.ct2_python:
                ct = [a.ct2_python, os.path.join(HERE, "ct2_bench.py"), "translate", "--model", ct2]
                cmds["ct2"] = ct + ["--out", outs["ct2"]] + common + rep
                cmds["ct2_int8"] = ct + ["--out", outs["ct2_int8"], "--compute-type", "int8"] + common + rep
            if a.int8:
                outs["attn_int8"] = os.path.join(a.work, "out_attn_int8_b%d_k%d.ids" % (batch, beam))
                cmds["attn_int8"] = [os.path.join(a.build, "bench_translate"), "--model", model, "--out",
                                     outs["attn_int8"], "--precision", "int8"] + common + rep
            name = "translate %s batch %d (tok/s)" % ("greedy" if beam == 1 else "beam %d" % beam, batch)
            runs = best_policy(alternate(with_builds(a, cmds), env, a.repeats, a.policies), notes, name)
            compare_builds(a.builds_table, name, runs)
            ref = read_ids(outs["attn"])
            c = CONFIGS["base"]
            flops = decode_flops(c, [len(s) for s in srcs[:n]], [len(r) for r in ref], beam)
            tokens = sum(len(r) for r in ref)
            row(table, name, runs["attn"], {k: v for k, v in runs.items() if k in ("torch", "ct2", "ct2_int8")},
                flops / tokens, peak)
            out_lens = [len(r) for r in ref]
            if batch == 1:  # bandwidth-bound: the bytes of weights a token reads (bench/limits.py)
                table[-1].update(bw_bytes_per_token=limits.bytes_per_token(c, out_lens, a.max_len, "fp32"),
                                 bw_systems=[k for k in ("attn", "ct2") if k in table[-1]])
            if "attn_int8" in runs and "ct2_int8" in runs:  # int8 against int8
                row(table, name.replace(" (tok/s)", " int8"), runs["attn_int8"], {"ct2_int8": runs["ct2_int8"]},
                    flops / tokens, peak)
                if batch == 1:
                    table[-1].update(bw_bytes_per_token=limits.bytes_per_token(c, out_lens, a.max_len, "int8"),
                                     bw_systems=["attn", "ct2_int8"])
            for k in cmds:
                if k == "attn":
                    continue
                base, _, build = k.partition("~")
                out = outs[base] + ("~" + build if build else "")
                same, total, frac = agreement(read_ids(outs[base]) if build else ref, read_ids(out))
                notes.append("%s: %s vs attn: %d/%d sentences equal, %.1f%% of attn's tokens before the first "
                             "difference" % (name, k, same, total, 100 * frac))
            print("  %s: %s" % (name, {k: [round(r["tokens_per_s"], 1) for r in v] for k, v in runs.items()}),
                  file=sys.stderr)


def bench_classifier(a, env, table, peak, notes):
    exe = os.path.join(a.build, "bench_classifier")
    script = os.path.join(REPO, "tests", "classify", "torch_classifier.py")
    if not (os.path.exists(exe) and os.path.exists(script)):
        notes.append("classifier: skipped (bench_classifier or torch_classifier.py missing)")
        return
    seconds = "3" if a.quick else "6"
    pattern = re.compile(r"(train|inference)\s+batch \d+:.*?([\d.]+) samples/s")

    cmds = {"attn": [exe, str(a.threads), seconds],
            "torch": [TORCH_PY, script, "--bench", "--threads", str(a.threads), "--seconds", seconds]}
    if a.bf16:
        cmds["attn_bf16"] = [exe, str(a.threads), seconds, "bf16"]

    def run(cmd, env):  # {"train": samples/s, "inference": samples/s, "rss": MB}
        p = subprocess.run(["/usr/bin/time", "-f", "RSS %M"] + cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
        rates = {m.group(1): float(m.group(2)) for m in pattern.finditer(p.stdout)}
        return dict(rates, rss=float(re.search(r"RSS (\d+)", p.stderr).group(1)) / 1024)

    res = alternate(with_builds(a, cmds), env, a.repeats, a.policies, run)
    d, L, T, f = 300, 2, 32, 1024
    fwd = L * (2 * T * (4 * d * d + 2 * d * f) + 4 * T * T * d) + 2 * T * d * 4
    for what, flops in (("train", 3 * fwd), ("inference", fwd)):
        runs = best_policy({k: [dict(tokens_per_s=r[what], peak_rss_mb=r["rss"]) for r in v] for k, v in res.items()},
                           notes, "classifier %s" % what)
        compare_builds(a.builds_table, "classifier %s (samples/s)" % what, runs)
        row(table, "classifier %s (samples/s)" % what, runs["attn"], {"torch": runs["torch"]}, flops, peak)
        if a.bf16:
            row(table, "classifier %s bf16 vs torch fp32" % what, runs["attn_bf16"], {"torch": runs["torch"]}, flops, peak)
    notes.append("classifier: peak RSS covers its train and inference runs together (one process)")


def print_table(table, peak_before, peak_after, threads, bw, reads=()):
    print("\nthreads %d; fp32 GEMM peak %.0f GFLOPS before, %.0f after (mean %.0f used)" %
          (threads, peak_before, peak_after, (peak_before + peak_after) / 2))
    if bw[0] > 0:
        print("memory bandwidth (STREAM triad) %.1f GB/s before, %.1f after (mean %.1f used)" % (bw[0], bw[1], sum(bw) / 2))
        if len(reads) == 2 and min(reads) > 0:
            print("reading alone (bench_bandwidth's read_gb_s, not a limit the goals use) %.1f GB/s before, %.1f after"
                  % tuple(reads))
    print("ratio = attn / other (> 1: attn faster); %pk = model FLOPs/s / GEMM peak; %bw (batch 1) = weight "
          "bytes read/s / bandwidth, c = CTranslate2 in the row's precision; RSS in MB\n")
    hdr = "| %-34s | %9s | %9s | %6s | %9s | %6s | %9s | %6s | %6s | %6s | %6s | %6s | %5s | %5s | %5s | %5s | %5s |"
    print(hdr % ("task", "attn", "torch", "ratio", "ct2", "ratio", "ct2 int8", "ratio", "RSS a", "RSS t", "RSS c",
                 "RSS c8", "%pk a", "%pk t", "%pk c", "%bw a", "%bw c"))
    print("|" + "|".join("-" * (w + 2) for w in (34, 9, 9, 6, 9, 6, 9, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5)) + "|")
    f = lambda r, k, fmt: (fmt % r[k]) if k in r else "-"  # noqa: E731
    for r in table:
        print(hdr % (r["task"], f(r, "attn", "%.1f"), f(r, "torch", "%.1f"), f(r, "torch_ratio", "%.2f"),
                     f(r, "ct2", "%.1f"), f(r, "ct2_ratio", "%.2f"), f(r, "ct2_int8", "%.1f"),
                     f(r, "ct2_int8_ratio", "%.2f"), f(r, "attn_rss", "%.0f"), f(r, "torch_rss", "%.0f"),
                     f(r, "ct2_rss", "%.0f"), f(r, "ct2_int8_rss", "%.0f"), f(r, "attn_peak", "%.3f"),
                     f(r, "torch_peak", "%.3f"), f(r, "ct2_peak", "%.3f"), f(r, "attn_bw", "%.3f"),
                     f(r, "ct2_bw", "%.3f") if "ct2_bw" in r else f(r, "ct2_int8_bw", "%.3f")))


def print_builds(builds_table):
    if not builds_table:
        return
    print("\nthis build against the others of --builds (ratio > 1: this build faster), medians of alternating runs\n")
    hdr = "| %-34s | %-10s | %-10s | %9s | %9s | %6s |"
    print(hdr % ("task", "variant", "other", "this", "other", "ratio"))
    print("|" + "|".join("-" * (w + 2) for w in (34, 10, 10, 9, 9, 6)) + "|")
    for task, variant, other, this, theirs in builds_table:
        print(hdr % (task, variant, other, "%.1f" % this, "%.1f" % theirs, "%.3f" % (this / theirs)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--only", default="train,translate,classifier,bf16loss")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--configs", default="small,base", help="training configurations")
    p.add_argument("--quick", action="store_true", help="fewer steps and sentences (2 at batch 1)")
    p.add_argument("--max-len", type=int, default=32, help="output tokens per sentence at most")
    p.add_argument("--translate-repeats", type=int, default=3,
                   help="translations of the sources in each attn and CTranslate2 process; the best time counts")
    p.add_argument("--work", default="/tmp/attn-compare")
    p.add_argument("--no-bf16", dest="bf16", action="store_false", help="skip attn's bf16 training rows")
    p.add_argument("--no-int8", dest="int8", action="store_false", help="skip attn's int8 translation rows")
    p.add_argument("--ct2-python", default=os.path.join(os.environ.get("ATTN_CT2_VENV", "/work/venv-ct2"), "bin", "python"),
                   help="a python with ctranslate2 installed ('' to skip CTranslate2)")
    p.add_argument("--policies", default="attn=default,torch=PASSIVE,ct2=default/PASSIVE",
                   help="OMP_WAIT_POLICY of each system, SYSTEM=P[/P...] with P one of default (unset), PASSIVE, "
                        "ACTIVE; a system given several runs under each and is scored by its best")
    p.add_argument("--builds", default="",
                   help="other attn builds run beside --build, alternating: NAME=DIR[,NAME=DIR] (e.g. "
                        "before=/tmp/old/build,portable=build-portable); a table of ratios per cell")
    bf16_loss.add_arguments(p)
    a = p.parse_args()
    a.builds = dict(part.split("=", 1) for part in filter(None, a.builds.split(",")))
    a.builds_table = []
    if a.ct2_python and not os.path.exists(a.ct2_python):
        print("no %s: CTranslate2 skipped" % a.ct2_python, file=sys.stderr)
        a.ct2_python = ""
    a.policies = parse_policies(a.policies)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    only = set(a.only.split(","))
    table, notes = [], []
    env_peak = policy_env(env, a.policies["attn"][0])
    peak_before = measure_peak(a.build, a.threads, env_peak)
    reads = []  # bench_bandwidth's read-only rate, before and after, for the record beside the triad
    bw_before = limits.measure_bandwidth(a.build, a.threads, env_peak, reads)
    peak = peak_before
    print("GEMM peak %.0f GFLOPS" % peak, file=sys.stderr)
    if "train" in only:
        bench_train(a, env, table, peak, notes)
    if "translate" in only:
        bench_translate(a, env, table, peak, notes)
    if "classifier" in only:
        bench_classifier(a, env, table, peak, notes)
    peak_after = measure_peak(a.build, a.threads, env_peak)
    bw = (bw_before, limits.measure_bandwidth(a.build, a.threads, env_peak, reads))
    for r in table:
        limits.add_bandwidth_fractions(r, sum(bw) / 2)
    scale = peak / ((peak_before + peak_after) / 2)
    for r in table:
        if "in_run_peak" in r:
            r["attn_peak_of_run_peak"] *= scale
            notes.append("%s: %%peak against the peak measured in each attn process (median %.0f GFLOPS); "
                         "against the run's mean peak %.0f: %.3f"
                         % (r["task"], r["in_run_peak"], (peak_before + peak_after) / 2, r["attn_peak_of_run_peak"]))
            continue
        for k in list(r):
            if k.endswith("_peak"):
                r[k] *= scale
    print_table(table, peak_before, peak_after, a.threads, bw, reads)
    print_builds(a.builds_table)
    for n in notes:
        print("  " + n)
    if "bf16loss" in only and a.bf16:  # after the timings: it is not one of them, and it needs no quiet machine
        r = bf16_loss.compare(a, policy_env(env, a.policies["attn"][0]), os.path.join(os.path.abspath(a.work), "bf16-loss"))
        print("bf16 dev loss %.4f against fp32 %.4f after %d steps: %+.3f%% (goal: within 1%%)"
              % (r["bf16_dev_nll"], r["fp32_dev_nll"], r["steps"], 100 * r["rel_diff"]))


if __name__ == "__main__":
    main()
