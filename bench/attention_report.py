#!/usr/bin/python3
"""The attention family compared at equal training time on the EN->DE corpus, as ONE
command that trains, evaluates and writes docs/attention-report.md with SVG plots:

  (a) the Transformer, default recipe (scaled dot-product attention, 4 heads: d_k = 64)
  (b) an LSTM encoder-decoder with additive (Bahdanau) attention, bidirectional encoder
  (c) the Transformer with dot, additive and bilinear scores (scaled_dot is (a))
  (d) dot vs scaled_dot at a large d_k: one head (d_k = d_model = 256), a shorter run

Every run trains for the same time (`attn train --max-minutes`; by default CPU time, `train.clock=cpu`,
so that runs sharing the machine get the same compute), without validation (its time
would count against the budget), writing a checkpoint every minutes/K. Afterwards each checkpoint
is scored on the first N dev sentences (`attn score`: the dev-loss curve), the last one is
translated greedily and, for (a) and (b), with beams 4 and 8 (dev BLEU / chrF with `attn bleu`,
decoding speed), and the report's verdicts on the seeds' claims are computed from those figures
with paired bootstrap resampling. Stdlib only.

  /usr/bin/python3 bench/attention_report.py --attn build/attn --minutes 10 --parallel 2 \
      --out docs/attention-report

--parallel 2 runs two jobs at a time with one thread each; --reuse skips finished runs and
evaluations (and resumes interrupted trainings), so the report can be rebuilt from existing runs.
"""
import argparse
import concurrent.futures
import json
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_report_write as write  # noqa: E402

LSTM_SETS = ["model=rnn", "model.score=additive", "model.rnn_cell=lstm", "model.bidirectional=true",
             "model.d_model=256", "model.encoder_layers=1", "model.decoder_layers=1", "train.schedule=constant",
             "train.lr=0.002", "train.warmup=20", "train.clip_norm=1.0"]


# The unfused additive score keeps [batch * heads, T, S, d_k] tensors per layer: 9 GB at 2048 tokens
# a batch (OOM-killed beside other jobs). Half the batch, accumulated twice: the same 2048 tokens a step.
ADDITIVE_MEMORY = ["train.max_tokens=1024", "train.accumulate=2"]


def run_specs(a):
    """The runs: name, label, --set overrides, minutes, beams to decode with."""
    beams = a.beams
    dk = a.dk_minutes if a.dk_minutes > 0 else a.minutes / 2
    return [
        dict(name="transformer", label="Transformer (scaled dot, d_k 64)", sets=[], minutes=a.minutes, beams=beams),
        dict(name="lstm", label="BiLSTM + additive", sets=LSTM_SETS, minutes=a.minutes, beams=beams),
        dict(name="tf-dot", label="Transformer, dot", sets=["model.score=dot"], minutes=a.minutes, beams=[1]),
        dict(name="tf-additive", label="Transformer, additive", sets=["model.score=additive"] + ADDITIVE_MEMORY, minutes=a.minutes,
             beams=[1]),
        dict(name="tf-bilinear", label="Transformer, bilinear", sets=["model.score=bilinear"], minutes=a.minutes,
             beams=[1]),
        dict(name="tf-h1-scaled", label="1 head (d_k 256), scaled dot", sets=["model.heads=1"], minutes=dk,
             beams=[1]),
        dict(name="tf-h1-dot", label="1 head (d_k 256), dot", sets=["model.heads=1", "model.score=dot"], minutes=dk,
             beams=[1]),
    ]


def log(msg):
    print(time.strftime("%H:%M:%S"), msg, file=sys.stderr, flush=True)


def env():
    e = dict(os.environ)
    e["OMP_WAIT_POLICY"] = "passive"
    return e


def head_lines(src, dst, n):
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
        for i, line in enumerate(f):
            if n and i >= n:
                break
            g.write(line)


def prepare_data(a, work):
    """Training files (the first --train-lines, or the corpus) and the first N dev sentences."""
    d = os.path.join(work, "data")
    os.makedirs(d, exist_ok=True)
    files = {}
    for side in ("en", "de"):
        src = os.path.join(a.data, "train." + side)
        if a.train_lines:
            files["train." + side] = os.path.join(d, f"train{a.train_lines}.{side}")
            head_lines(src, files["train." + side], a.train_lines)
        else:
            files["train." + side] = os.path.abspath(src)
        files["dev." + side] = os.path.join(d, f"dev{a.dev_sentences}.{side}")
        head_lines(os.path.join(a.data, "dev." + side), files["dev." + side], a.dev_sentences)
    return files


def run_cmd(cmd, log_path=None, stdin=None, stdout=None):
    """Runs cmd; its stderr (and stdout unless captured) appended to log_path. Returns (wall seconds,
    CPU seconds of the child, user + system over all its threads)."""
    t0 = time.monotonic()
    with open(log_path or os.devnull, "a") as lf:
        lf.write("$ " + " ".join(cmd) + "\n")
        lf.flush()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=stdout or lf, stderr=lf, env=env())
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode} (log: {log_path})")
    return time.monotonic() - t0, usage.ru_utime + usage.ru_stime


def prepare_tokenizer(a, work, files):
    """One SentencePiece model for every run (a 1-step `attn train`), so losses compare and no run
    spends its budget training a tokenizer."""
    d = os.path.join(work, "tokenizer")
    spm = os.path.join(d, "spm.model")
    if a.reuse and os.path.exists(spm):
        return spm
    shutil.rmtree(d, ignore_errors=True)
    log("training the shared SentencePiece model")
    run_cmd([a.attn, "train", "--model-dir", d, "--max-steps", "1", "--threads", str(a.threads),
             "--set", "data.train_src=" + files["train.en"], "--set", "data.train_tgt=" + files["train.de"],
             "--set", "data.valid_src=", "--set", f"data.vocab_size={a.vocab}"], d + ".log")
    return spm


def checkpoints(model_dir):
    """[(step, minutes, path)] of the complete checkpoints, oldest first."""
    root = os.path.join(model_dir, "checkpoints")
    out = []
    for n in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        p = os.path.join(root, n)
        if n.startswith("step-") and ".tmp" not in n and os.path.exists(os.path.join(p, "state.json")):
            with open(os.path.join(p, "state.json")) as f:
                s = json.load(f)
            out.append((s["step"], s["elapsed_seconds"] / 60.0, p))
    return sorted(out)


def train(a, spec, files, spm):
    d = spec["dir"]
    marker = os.path.join(d, "report_run.json")
    common = ["data.train_src=" + files["train.en"], "data.train_tgt=" + files["train.de"],
              "data.valid_src=" + files["dev.en"], "data.valid_tgt=" + files["dev.de"], "data.tokenizer=" + spm,
              "train.validate_every=0", "train.valid_sentences=1",
              f"train.checkpoint_minutes={spec['minutes'] / a.curve_points:.6g}", "train.keep_checkpoints=0",
              "train.log_every=20", "train.clock=" + a.clock,
              "train.precision=fp32",  # the same arithmetic for every family (auto would pick bf16)
              "train.lr_factor=2"]  # the Transformer recipe's default when the report was made (now 1)
    if "model=rnn" not in spec["sets"]:
        common.append("model.size=small")  # the report's size; model.size auto may pick another for the budget
    want = {"minutes": spec["minutes"], "threads": a.threads, "sets": common + spec["sets"]}
    if not a.reuse and os.path.exists(d):
        raise SystemExit(f"{d} exists: pass --reuse to keep (or resume) it, or remove it")
    if os.path.exists(marker):
        with open(marker) as f:
            have = json.load(f)
        if have == want:
            log(f"{spec['name']}: trained already, reused")
            return
        raise SystemExit(f"{d} was trained with other settings ({marker}); remove it or choose another --work")
    resume = a.reuse and checkpoints(d)
    if not resume:
        shutil.rmtree(d, ignore_errors=True)
    elif os.path.exists(os.path.join(d, "report_eval.json")):
        os.remove(os.path.join(d, "report_eval.json"))
    cmd = [a.attn, "train", "--model-dir", d, "--max-minutes", f"{spec['minutes']:g}", "--threads", str(a.threads)]
    for s in want["sets"]:
        cmd += ["--set", s]
    if resume:
        cmd.append("--resume")
    log(f"{spec['name']}: training {spec['minutes']:g} min{' (resumed)' if resume else ''}")
    run_cmd(cmd, d + ".log")
    with open(marker, "w") as f:
        json.dump(want, f, indent=1)
    log(f"{spec['name']}: trained")


def weights_dir(model_dir, ckpt, tmp):
    """A model directory for one checkpoint's weights: config.json, spm.model, the weights linked."""
    os.makedirs(tmp, exist_ok=True)
    for n in ("config.json", "spm.model"):
        shutil.copy(os.path.join(model_dir, n), os.path.join(tmp, n))
    link = os.path.join(tmp, "model.safetensors")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(os.path.join(ckpt, "model.safetensors")), link)
    return tmp


def score(a, model, files, log_path):
    out = subprocess.run([a.attn, "score", "--model", model, "--src", files["dev.en"], "--tgt", files["dev.de"],
                          "--threads", str(a.threads)], capture_output=True, text=True, env=env())
    if out.returncode != 0:
        raise RuntimeError(f"attn score on {model}: {out.stderr}")
    return [-float(x) for x in out.stdout.split()]


def bleu_chrf(a, hyp, ref):
    out = subprocess.run([a.attn, "bleu", "--ref", ref, "--hyp", hyp, "--chrf", "--score-only"],
                         capture_output=True, text=True, env=env())
    if out.returncode != 0:
        raise RuntimeError(f"attn bleu {hyp}: {out.stderr}")
    v = [float(x) for x in out.stdout.split()]
    return v[0], v[1]


def evaluate(a, spec, files):
    d = spec["dir"]
    path = os.path.join(d, "report_eval.json")
    want = {"dev_sentences": a.dev_sentences, "beams": spec["beams"], "threads": a.threads, "clock": a.clock}
    if a.reuse and os.path.exists(path):
        with open(path) as f:
            r = json.load(f)
        if r.get("settings") == want:
            log(f"{spec['name']}: evaluated already, reused")
            return r
    cks = checkpoints(d)
    if not cks:
        raise RuntimeError(f"{d}: no checkpoints")
    log_path = d + ".eval.log"
    r = {"settings": want, "curve": [], "decode": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for step, minutes, ck in cks:
            nll = score(a, weights_dir(d, ck, os.path.join(tmp, "m")), files, log_path)
            r["curve"].append({"step": step, "minutes": minutes, "nll": nll})
        model = weights_dir(d, cks[-1][2], os.path.join(tmp, "m"))
        for beam in spec["beams"]:
            hyp = os.path.join(d, f"report_dev{a.dev_sentences}.beam{beam}.hyp")
            with open(files["dev.en"]) as fin, open(hyp, "w") as fout:
                wall, cpu = run_cmd([a.attn, "translate", "--model", model, "--beam", str(beam), "--threads",
                                     str(a.threads)], log_path, stdin=fin, stdout=fout)
            secs = cpu if a.clock == "cpu" else wall
            bleu, chrf = bleu_chrf(a, hyp, files["dev.de"])
            r["decode"][str(beam)] = {"bleu": bleu, "chrf": chrf, "seconds": secs, "wall_seconds": wall, "hyp": os.path.abspath(hyp)}
            log(f"{spec['name']}: beam {beam}: BLEU {bleu:.2f} chrF {chrf:.2f} ({secs:.1f}s)")
    with open(path, "w") as f:
        json.dump(r, f)
    return r


def train_stats(model_dir):
    """From train_log.jsonl: steps, minutes, target tokens/s over the run, the last validation's dev
    loss per token (taken on the final weights, after the budget)."""
    events = []
    with open(os.path.join(model_dir, "train_log.jsonl")) as f:
        for line in f:
            if line.strip():
                events.append(json.loads(line))
    tr = [e for e in events if e.get("event") == "train"]
    va = [e for e in events if e.get("event") == "valid"]
    last = tr[-1]
    return {"steps": last["step"], "minutes": last["elapsed"] / 60.0, "tokens": last["tokens_seen"],
            "tokens_per_s": last["tokens_seen"] / last["elapsed"],
            "final_dev_nll_per_token": va[-1]["dev_nll"] if va else None,
            "epochs": last.get("epoch")}


def parameter_count(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    total = 0
    for k, v in header.items():
        if k != "__metadata__":
            count = 1
            for s in v["shape"]:
                count *= s
            total += count
    return total


def machine():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        commit = ""
    return {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform(), "commit": commit,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def default_warmup(attn):
    """train.warmup of the default recipe, from `attn train --help-config` (None if not found)."""
    out = subprocess.run([attn, "train", "--help-config"], capture_output=True, text=True, env=env()).stdout
    m = re.search(r"train\.warmup:\s*(\d+)", out)
    return int(m.group(1)) if m else None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--attn", default="build/attn", help="the attn binary")
    p.add_argument("--data", default="/work/shared/data/mt-ende", help="corpus: train.{en,de}, dev.{en,de}")
    p.add_argument("--minutes", type=float, default=10, help="training time of each main run (on --clock)")
    p.add_argument("--dk-minutes", type=float, default=0, help="training time of the two 1-head runs (0: minutes/2)")
    p.add_argument("--clock", default="cpu", choices=("cpu", "wall"),
                   help="what the budgets and speeds count: each process's CPU time (default; fair when jobs\n"
                        "share the machine or a hypervisor steals time) or wall time (train.clock)")
    p.add_argument("--threads", type=int, default=0, help="threads per job (0: 2 // parallel)")
    p.add_argument("--parallel", type=int, default=1, choices=(1, 2), help="jobs at a time")
    p.add_argument("--dev-sentences", type=int, default=500, help="first N dev sentences evaluated")
    p.add_argument("--train-lines", type=int, default=0, help="train on the first N lines only (0: all)")
    p.add_argument("--vocab", type=int, default=8000, help="SentencePiece pieces")
    p.add_argument("--beams", default="1,4,8", help="beams for the Transformer and the LSTM (1: greedy)")
    p.add_argument("--curve-points", type=int, default=6, help="checkpoints per run (dev-loss curve points)")
    p.add_argument("--bootstrap", type=int, default=1000, help="paired bootstrap resamples")
    p.add_argument("--work", default="runs/attention-report", help="model directories and data slices")
    p.add_argument("--out", default="docs/attention-report", help="writes OUT.md and OUT/*.svg")
    p.add_argument("--reuse", action="store_true", help="keep finished runs/evaluations, resume interrupted runs")
    a = p.parse_args()
    a.threads = a.threads or max(1, 2 // a.parallel)
    a.beams = sorted({int(b) for b in a.beams.split(",")})
    a.attn = os.path.abspath(a.attn)
    return a


def main():
    a = parse_args()
    started = time.time()
    specs = run_specs(a)
    for s in specs:
        s["dir"] = os.path.abspath(os.path.join(a.work, s["name"]))
    existing = [d for d in [os.path.join(a.work, "tokenizer")] + [s["dir"] for s in specs] if os.path.exists(d)]
    if existing and not a.reuse:
        raise SystemExit(f"{', '.join(existing)} exist: pass --reuse to keep (or resume) them, or remove them")
    os.makedirs(a.work, exist_ok=True)
    files = prepare_data(a, a.work)
    spm = prepare_tokenizer(a, a.work, files)
    # Longest runs first, so two workers finish together.
    order = sorted(specs, key=lambda s: -s["minutes"])
    with concurrent.futures.ThreadPoolExecutor(a.parallel) as pool:
        list(pool.map(lambda s: train(a, s, files, spm), order))
        evals = list(pool.map(lambda s: evaluate(a, s, files), specs))
    for s, e in zip(specs, evals):
        s["eval"] = e
        s["train"] = train_stats(s["dir"])
        s["params"] = parameter_count(os.path.join(s["dir"], "model.safetensors"))
    info = machine()
    info["warmup"] = default_warmup(a.attn)
    info["command"] = " ".join(["/usr/bin/python3"] + sys.argv)
    info["wall_minutes"] = (time.time() - started) / 60.0
    write.report(a, specs, files, info)


if __name__ == "__main__":
    main()
