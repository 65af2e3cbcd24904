#!/usr/bin/python3
"""Issue 31's equal-budget comparison: attn's default translation recipe and its PyTorch twin
(bench/torch_translation_twin.py) trained for the same CPU time on the same threads, both scored
with attn's decoder (greedy and beam 4, `attn translate` then `attn bleu --chrf`) on the whole dev
and test_id sets. Prints a markdown table and the commands.

  nice /usr/bin/python3 bench/equal_budget.py --budgets 15 30 60 --threads 2 --lock /work/bench.lock

Per budget M (CPU minutes, this process's CPU time over all threads on both sides):
  attn: attn train --max-minutes M --set train.clock=cpu --set model.size=small --threads N --precision P
        --set data.tokenizer=WORK/init/spm.model (the recipe's defaults otherwise: seed 1)
  twin: torch_translation_twin.py --max-cpu-minutes M --threads N --precision P --init WORK/init-ref
then `attn import-torch` of the twin. Both start from the same weights: WORK/init is `attn train`
stopped before its first step (its SentencePiece model and initial model, seed 1), exported with
`attn export-torch` to WORK/init-ref for the twin. --precision auto is what attn's auto picks on
this CPU (bf16 where it multiplies bf16 natively, `attn info`), given to both sides.
--lock FILE holds `flock FILE` around each timed training only (not around scoring).
Finished runs are kept (WORK/attn-M, WORK/twin-M with a done.json); --reuse skips them and any
translation already scored. --side attn|twin runs one side only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from twin_attn import bleu_chrf, import_into_attn, translate  # noqa: E402



def add_run_args(p):
    """The options of a timed attn training and its scoring, shared with bench/size_runs.py."""
    add = p.add_argument
    root = os.path.normpath(os.path.join(HERE, ".."))
    add("--threads", type=int, default=2)
    add("--work", default=os.path.join(root, "runs", "equal-budget"))
    add("--attn", default=os.path.join(root, "build", "attn"))
    add("--data", default=os.path.normpath(os.path.join(root, "..", "shared", "data", "mt-ende")))
    add("--precision", choices=["auto", "fp32", "bf16"], default="auto")
    add("--lock", help="flock this file around each timed training (e.g. /work/bench.lock)")
    add("--reuse", action="store_true", help="keep finished runs and scores instead of redoing them")
    add("--beams", type=int, nargs="+", default=[1, 4], help="beams scored (default 1 4)")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(p)
    add = p.add_argument
    add("--budgets", type=float, nargs="+", default=[15, 30, 60], help="CPU minutes a side (default 15 30 60)")
    add("--side", choices=["both", "attn", "twin"], default="both")
    add("--no-score", action="store_true", help="train only")
    add("--sets", nargs="+", default=["dev", "test_id"], help="sets scored (default dev test_id, whole)")
    a = p.parse_args()
    a.attn, a.work = os.path.abspath(a.attn), os.path.abspath(a.work)
    return a


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd, log_path, lock=None):
    """Runs cmd (under `flock LOCK` if given) with its output in log_path; returns the command."""
    full = (["flock", lock] if lock else []) + cmd
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    with open(log_path, "w") as f:
        f.write("$ " + " ".join(full) + "\n")
        f.flush()
        if subprocess.run(full, stdout=f, stderr=subprocess.STDOUT, env=env).returncode != 0:
            raise SystemExit(f"{' '.join(full)} failed (log: {log_path})")
    return full


def data_sets(a):
    return ["--set", f"data.train_src={a.data}/train.en", "--set", f"data.train_tgt={a.data}/train.de",
            "--set", f"data.valid_src={a.data}/dev.en", "--set", f"data.valid_tgt={a.data}/dev.de"]


def prepare_init(a):
    """WORK/init: attn's SentencePiece model and initial weights (a run whose budget is spent before
    its first step); WORK/init-ref: the same weights as a torch_ref.py directory."""
    init, ref = os.path.join(a.work, "init"), os.path.join(a.work, "init-ref")
    if a.reuse and os.path.exists(os.path.join(ref, "weights.npz")):
        return init, ref
    shutil.rmtree(init, ignore_errors=True)
    shutil.rmtree(ref, ignore_errors=True)
    log("attn's tokenizer and initial model")
    run([a.attn, "train", "--model-dir", init, "--max-minutes", "0.000001", "--threads", str(a.threads),
         "--set", "model.size=small"] + data_sets(a),
        init + ".log")
    subprocess.run([a.attn, "export-torch", init, ref], check=True, capture_output=True)
    return init, ref


def resolve_precision(a):
    if a.precision != "auto":
        return a.precision
    info = subprocess.run([a.attn, "info"], capture_output=True, text=True, check=True).stdout
    return "bf16" if "bf16 products: native" in info else "fp32"


def minutes_name(m):
    return f"{m:g}"


def train_attn(a, m, init, precision, size="small", name="attn", sets=()):
    """attn's recipe at model.size `size` for m CPU minutes, in WORK/NAME-M; `sets`: further
    key=value overrides of the recipe."""
    d = os.path.join(a.work, f"{name}-{minutes_name(m)}")
    done = os.path.join(d, "done.json")
    if a.reuse and os.path.exists(done):
        return json.load(open(done))
    shutil.rmtree(d, ignore_errors=True)
    log(f"{name}: {m:g} CPU minutes, model.size {size}")
    cmd = run([a.attn, "train", "--model-dir", d, "--max-minutes", f"{m:g}", "--threads", str(a.threads),
               "--precision", precision, "--set", "train.clock=cpu", "--set", f"model.size={size}",
               "--set", f"data.tokenizer={init}/spm.model"] + data_sets(a) +
              [x for kv in sets for x in ("--set", kv)], d + ".log", a.lock)
    events = [json.loads(line) for line in open(os.path.join(d, "train_log.jsonl"))]
    last = [e for e in events if e["event"] == "train"][-1]
    kept = json.load(open(os.path.join(d, "config.json"))).get("training", {}).get("step")
    info = dict(system="attn", size=size, sets=list(sets), minutes=m, dir=d, model=d, steps=last["step"],
                cpu_seconds=last["elapsed"],
                kept_step=kept, command=" ".join(cmd), log=os.path.join(d, "train_log.jsonl"))
    json.dump(info, open(done, "w"), indent=2)
    return info


def train_twin(a, m, init, ref, precision):
    d = os.path.join(a.work, f"twin-{minutes_name(m)}")
    done = os.path.join(d, "done.json")
    if a.reuse and os.path.exists(done):
        return json.load(open(done))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    log(f"twin: {m:g} CPU minutes")
    cmd = run(["/usr/bin/python3", os.path.join(HERE, "torch_translation_twin.py"), "--out", d,
               "--spm", f"{init}/spm.model", "--init", ref, "--attn", a.attn, "--max-cpu-minutes", f"{m:g}",
               "--threads", str(a.threads), "--precision", precision,
               "--train-src", f"{a.data}/train.en", "--train-tgt", f"{a.data}/train.de",
               "--valid-src", f"{a.data}/dev.en", "--valid-tgt", f"{a.data}/dev.de"], d + ".log", a.lock)
    summary = json.load(open(os.path.join(d, "twin.json")))
    model = os.path.join(d, "model")
    shutil.rmtree(model, ignore_errors=True)
    import_into_attn(a.attn, d, model)
    info = dict(system="PyTorch twin", minutes=m, dir=d, model=model, steps=summary["steps"],
                cpu_seconds=summary["cpu_seconds"], kept_step=summary["best_step"], command=" ".join(cmd),
                log=os.path.join(d, "train_log.jsonl"), kept_pairs=summary["data"]["kept"])
    json.dump(info, open(done, "w"), indent=2)
    return info


def score(a, info):
    """BLEU/chrF of the run's model on the whole dev and test_id sets, greedy and beam 4."""
    path = os.path.join(info["dir"], "scores.json")
    scores = json.load(open(path)) if a.reuse and os.path.exists(path) else {}
    for s in a.sets:
        for beam in a.beams:
            key = f"{s}.beam{beam}"
            if key in scores:
                continue
            log(f"scoring {info['system']} {info['minutes']:g} min: {s}, beam {beam}")
            hyp = os.path.join(info["dir"], f"{key}.hyp")
            translate(a.attn, info["model"], f"{a.data}/{s}.en", hyp, beam, a.threads)
            scores[key] = bleu_chrf(a.attn, hyp, f"{a.data}/{s}.de")
            json.dump(scores, open(path, "w"), indent=2)
    info["scores"] = scores
    return info


def table(a, rows):
    names = [f"{s} {'greedy' if b == 1 else f'beam {b}'} BLEU / chrF" for s in a.sets for b in a.beams]
    lines = ["| system | budget (CPU min) | steps | CPU s | model kept (step) | " + " | ".join(names) + " |",
             "|---" * (5 + len(names)) + "|"]
    for r in rows:
        sc = r.get("scores", {})
        cells = [f"{sc[f'{s}.beam{b}'][0]:.2f} / {sc[f'{s}.beam{b}'][1]:.2f}" if f"{s}.beam{b}" in sc else ""
                 for s in a.sets for b in a.beams]
        lines.append(f"| {r['system']} | {r['minutes']:g} | {r['steps']:,} | {r['cpu_seconds']:.0f} | {r['kept_step']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def losses(path):
    return {e["step"]: e["loss"] for e in map(json.loads, open(path)) if e["event"] == "train"}


def curves(pair):
    """The training loss of both sides at the steps both logged (every 50): the same data, weights
    and recipe should give the same curve over steps, whatever the speed."""
    a, t = losses(pair["attn"]["log"]), losses(pair["twin"]["log"])
    steps = sorted(set(a) & set(t))
    lines = [f"training loss, {pair['attn']['minutes']:g} CPU minutes: step attn twin"]
    lines += [f"  {s:6d} {a[s]:.4f} {t[s]:.4f}" for s in steps[:12]]
    return "\n".join(lines)


def check_same_data(attn_info, twin_info):
    """Both sides read the same pairs: attn's log line 'N kept' against the twin's count."""
    for line in open(attn_info["dir"] + ".log"):
        if line.startswith("training data:") and f" {twin_info['kept_pairs']} kept" not in line:
            raise SystemExit(f"the twin kept {twin_info['kept_pairs']} pairs; attn: {line.strip()}")


def main():
    a = parse_args()
    os.makedirs(a.work, exist_ok=True)
    init, ref = prepare_init(a)
    precision = resolve_precision(a)
    log(f"precision {precision} on both sides, {a.threads} threads, budgets {a.budgets} CPU minutes")
    rows, pairs = [], []
    for m in a.budgets:
        pair = {}
        if a.side in ("both", "attn"):
            pair["attn"] = train_attn(a, m, init, precision)
        if a.side in ("both", "twin"):
            pair["twin"] = train_twin(a, m, init, ref, precision)
        if len(pair) == 2:
            check_same_data(pair["attn"], pair["twin"])
            pairs.append(pair)
        rows += [info if a.no_score else score(a, info) for info in pair.values()]
    print(table(a, rows))
    print()
    for pair in pairs:
        print(curves(pair))
    print(f"\nCommands (scored with attn translate --beam {'|'.join(map(str, a.beams))} and attn bleu --chrf "
          f"on the whole {' and '.join(a.sets)}):")
    for r in rows:
        print(f"  {r['command']}")
    json.dump(rows, open(os.path.join(a.work, "results.json"), "w"), indent=2)


if __name__ == "__main__":
    main()
