#!/usr/bin/python3
"""Issue 31's size rule (docs/translation.md, "Model size for the budget"): attn's recipe at the
sizes of model.size's ladder (include/attn/train/model_size.h) for the same CPU budgets, each
scored with attn's decoder on the whole dev set (greedy and beam 4). Prints a markdown table with
each budget's reference steps (the steps the recipe's own size, small, made in it), which is the
rule's unit.

  /usr/bin/python3 bench/size_runs.py --runs tiny:5 small:5 tiny:10 small:10 medium:30 \\
      tiny:10:train.max_tokens=1024 tiny:10:train.warmup=200 --work /work/runs/equal-budget --reuse

A run is SIZE:CPU_MINUTES, optionally followed by :KEY=VALUE[,KEY=VALUE...], further `--set`s of
the recipe (batch, warm-up, dropout, ...), trained in WORK/SIZE@KEY=VALUE...-M.

It shares bench/equal_budget.py's work directory and its pieces: the same tokenizer and start
(WORK/init), the same recipe and clock (train.clock cpu, --threads, --precision auto), and the
small runs are equal_budget's attn-M (so its 15/30/60-minute runs count here too). Other sizes go
to WORK/SIZE-M.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import equal_budget  # noqa: E402


def parse_run(r):
    """SIZE:MINUTES[:KEY=VALUE,...] -> (size, minutes, [KEY=VALUE, ...])."""
    parts = r.split(":", 2)
    if len(parts) < 2 or any("=" not in kv for kv in (parts[2].split(",") if len(parts) == 3 else [])):
        raise SystemExit(f"size_runs: a run is SIZE:CPU_MINUTES[:KEY=VALUE,...], got {r!r}")
    return parts[0], float(parts[1]), parts[2].split(",") if len(parts) == 3 else []


def label(size, sets):
    return size + "".join(f" {kv}" for kv in sets)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    equal_budget.add_run_args(p)
    p.add_argument("--runs", nargs="+", required=True, help="SIZE:CPU_MINUTES, e.g. tiny:10 medium:30")
    p.add_argument("--sets", nargs="+", default=["dev"], help="sets scored (default dev, whole)")
    a = p.parse_args()
    a.attn, a.work = os.path.abspath(a.attn), os.path.abspath(a.work)
    a.runs = [parse_run(r) for r in a.runs]
    return a


def table(a, rows):
    reference = {r["minutes"]: r["steps"] for r in rows if r.get("size", "small") == "small" and not r.get("sets")}
    names = [f"{s} {'greedy' if b == 1 else f'beam {b}'}" for s in a.sets for b in a.beams]
    lines = ["| size | CPU min | reference steps | steps | kept step | " + " | ".join(names) + " |",
             "|---" * (5 + len(names)) + "|"]
    for r in sorted(rows, key=lambda r: (r["minutes"], r["weights"])):
        sc = r["scores"]
        ref = reference.get(r["minutes"])
        cells = [f"{sc[f'{s}.beam{b}'][0]:.2f} / {sc[f'{s}.beam{b}'][1]:.2f}" for s in a.sets for b in a.beams]
        lines.append(f"| {label(r.get('size', 'small'), r.get('sets', []))} | {r['minutes']:g} | {f'{ref:,}' if ref else '?'} | {r['steps']:,} | "
                     f"{r['kept_step']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def weights(model_dir):
    for line in open(model_dir + ".log"):
        if line.startswith("model:"):
            return int(line.split(" weights")[0].split()[-1])
    return 0


def main():
    a = parse_args()
    a.no_score = False
    os.makedirs(a.work, exist_ok=True)
    init, _ = equal_budget.prepare_init(a)
    precision = equal_budget.resolve_precision(a)
    equal_budget.log(f"precision {precision}, {a.threads} threads, runs {a.runs}")
    rows = []
    for size, m, sets in a.runs:
        name = "attn" if size == "small" and not sets else size + "".join(f"@{kv}" for kv in sets)
        info = equal_budget.train_attn(a, m, init, precision, size, name, sets)
        info = equal_budget.score(a, info)
        info["weights"] = weights(info["dir"])
        rows.append(info)
    print(table(a, rows))
    print("\nCommands (scored with attn translate and attn bleu --chrf on the whole "
          f"{' and '.join(a.sets)}; cells are BLEU / chrF):")
    for r in rows:
        print(f"  {r['command']}")
    json.dump(rows, open(os.path.join(a.work, "size_results.json"), "w"), indent=2)


if __name__ == "__main__":
    main()
