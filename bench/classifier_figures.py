"""The classifier's accuracy table: each configuration trained by attn and by its PyTorch twin
(bench/torch_classifier_train.py) on the same data for the same epochs, side by side (the two
runs of a configuration at the same time, one thread each), plus the naive Bayes baselines.
  OMP_WAIT_POLICY=passive nice -n 19 /usr/bin/python3 bench/classifier_figures.py --attn build/attn \
      [--only zh-seed,zh-best,...] [--epochs-scale 1] [--out runs/cls-figures]
Prints one markdown row per configuration and system: dev accuracy at the best dev loss (the
model attn keeps) and at the end of every epoch. spm configurations need the sentencepiece
Python module for the twin (PYTHONPATH with `pip download sentencepiece` unpacked)."""
import argparse, json, math, os, re, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data")
ZH, EN = os.path.join(DATA, "cls-zh-poetry"), os.path.join(DATA, "cls-en-brown")
SEED = {}  # the seed's configuration: every default of attn train --set task=classification
BEST = dict(pad_size=128, mask=True, pooling="mean", dropout=0.1, d_model=128, heads=4, d_ff=512)
# name: (data dir, epochs, validate_every, options); options use attn's keys without their section
CONFIGS = {
    "zh-seed": (ZH, 3, 100, dict(SEED)),
    "zh-best": (ZH, 4, 100, dict(BEST)),
    "en-seed": (EN, 3, 20, dict(tokens="word")),
    "en-best": (EN, 5, 20, dict(BEST, tokens="word", dropout=0.3)),
    "en-spm": (EN, 5, 20, dict(BEST, tokens="spm", dropout=0.3)),
}
SECTION = {"tokens": "data", "spm_vocab": "data", "lr": "train", "label_smoothing": "train", "weight_decay": "train"}


def attn_cmd(a, name, data, epochs, every, opts):
    cmd = [a.attn, "train", "--set", "task=classification", "--set", f"model_dir={a.out}/{name}",
           "--set", f"data.train={data}/train.tsv", "--set", f"data.dev={data}/dev.tsv",
           "--set", f"train.max_epochs={epochs}", "--set", f"train.validate_every={every}", "--set", "train.threads=1"]
    for k, v in opts.items():
        cmd += ["--set", f"{SECTION.get(k, 'model')}.{k}={str(v).lower() if isinstance(v, bool) else v}"]
    return cmd


def torch_cmd(a, name, data, epochs, every, opts):
    cmd = [sys.executable, os.path.join(HERE, "torch_classifier_train.py"), "--train", f"{data}/train.tsv",
           "--dev", f"{data}/dev.tsv", "--epochs", str(epochs), "--validate-every", str(every), "--threads", "1"]
    for k, v in opts.items():
        if k == "tokens" and v == "spm":
            cmd += ["--vocab-from", f"{a.out}/{name}"]  # attn's vocab.txt and spm.model
        elif v is True:
            cmd.append("--" + k.replace("_", "-"))
        else:
            cmd += ["--" + k.replace("_", "-"), str(v)]
    return cmd


def attn_result(model_dir, data):
    n = sum(1 for line in open(f"{data}/train.tsv", encoding="utf-8") if line.strip())
    per_epoch = math.ceil(n / 128)
    valid = [json.loads(l) for l in open(f"{model_dir}/train_log.jsonl") if '"valid"' in l]
    best = min(valid, key=lambda v: v["dev_loss"])
    ends = [round(v["dev_accuracy"], 4) for v in valid if v["step"] % per_epoch == 0]
    return dict(best_dev_accuracy=best["dev_accuracy"], best_epoch=round(best["step"] / per_epoch, 2), epoch_end_accuracy=ends)


def torch_result(log):
    return json.loads(re.search(r"^summary (.*)$", open(log).read(), re.M).group(1))


def finished(log, marker):
    return os.path.exists(log) and any(line.startswith(marker) for line in open(log, encoding="utf-8"))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attn", required=True); p.add_argument("--out", default="runs/cls-figures")
    p.add_argument("--only", default=",".join(CONFIGS))
    p.add_argument("--reuse", action="store_true",
                   help="keep a system's finished run (attn: its model dir's log says done; PyTorch: its log has the summary)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    rows = []
    for name in a.only.split(","):
        data, epochs, every, opts = CONFIGS[name]
        t0 = time.time()
        procs = []
        if not (a.reuse and finished(f"{a.out}/{name}.attn.log", "done: ")):
            procs.append(subprocess.Popen(attn_cmd(a, name, data, epochs, every, opts),
                                          stdout=open(f"{a.out}/{name}.attn.log", "w"), stderr=subprocess.STDOUT, env=env))
            if opts.get("tokens") == "spm":  # the twin reads attn's vocab.txt and spm.model
                while not os.path.exists(f"{a.out}/{name}/vocab.txt") and procs[0].poll() is None:
                    time.sleep(1)
        if not (a.reuse and finished(f"{a.out}/{name}.torch.log", "summary ")):
            procs.append(subprocess.Popen(torch_cmd(a, name, data, epochs, every, opts),
                                          stdout=open(f"{a.out}/{name}.torch.log", "w"), stderr=subprocess.STDOUT, env=env))
        assert all(x.wait() == 0 for x in procs), f"{name}: see {a.out}/{name}.*.log"
        for system, r in (("attn", attn_result(f"{a.out}/{name}", data)), ("PyTorch", torch_result(f"{a.out}/{name}.torch.log"))):
            rows.append(f"| {name} | {json.dumps(opts)} | {system} | {epochs} | {100 * r['best_dev_accuracy']:.2f}% "
                        f"(epoch {r['best_epoch']}) | {' / '.join(f'{100 * e:.2f}' for e in r['epoch_end_accuracy'])} |")
        print(rows[-2] + "\n" + rows[-1] + f"   <!-- {time.time() - t0:.0f} s -->", flush=True)
    print("\n| config | options | system | epochs | dev acc at best dev loss | dev acc at each epoch's end |\n|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
