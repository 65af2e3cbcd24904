"""Data-parallel scaling of `attn train` (docs/distributed.md, "Scaling"): tokens/s and step time of
1 process x 2 threads, 2 ranks x 1 thread over TCP loopback, and 2 ranks in two network
namespaces joined by a veth pair (one rank each), unlimited and with the veth limited by tc's
token bucket (tbf) to 1 Gbit/s and 100 Mbit/s; each with the buckets' allreduce overlapped with
backward and without. The share of the step spent waiting for the sums comes from attn's own
train_log.jsonl (allreduce_wait_s). Then the model of the step time,

    T(N, B) = t_c + 2 (N - 1) / N * S * w / B + 2 (N - 1) * buckets * alpha

(t_c the compute of one step, S the bytes of one allreduce, w the wire's overhead, 1514 bytes on
the wire per 1448 of TCP payload, B the bandwidth, alpha the latency of one message), with t_c
taken from the unlimited two-namespace run without overlap (its step time less its wait), is
checked against the runs limited by tc.

    sudo flock /work/bench.lock /usr/bin/python3 bench/distributed_scaling.py --attn build/attn \
        --shared ../shared [--steps 25] [--json out.json]

Needs root (ip netns, tc) and mpirun. A small Transformer (d_model 128, 2+2 layers, vocab 4000,
batches of 1024 tokens, accumulation 2), so each run takes well under a minute.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WIRE = 1514 / 1448  # Ethernet frame per TCP payload of a full segment (timestamps on)
ALPHA = 50e-6       # seconds per message on a LAN; the term is small beside the bandwidth's here


def sh(*args, **kw):
    return subprocess.run(list(args), check=True, **kw)


class Namespaces:
    """Two network namespaces, a veth pair between them, 10.234.0.1 and .2; removed on exit."""

    def __init__(self, work):
        pid = os.getpid()
        self.a, self.b = f"attnsc-{pid}-a", f"attnsc-{pid}-b"
        self.va, self.vb = f"asc{pid}a", f"asc{pid}b"
        self.agent = os.path.join(work, "agent.sh")

    def __enter__(self):
        sh("ip", "netns", "add", self.a)
        sh("ip", "netns", "add", self.b)
        sh("ip", "link", "add", self.va, "netns", self.a, "type", "veth", "peer", "name", self.vb, "netns", self.b)
        for ns, dev, ip in ((self.a, self.va, "10.234.0.1/30"), (self.b, self.vb, "10.234.0.2/30")):
            sh("ip", "-n", ns, "addr", "add", ip, "dev", dev)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", dev, "up")
        with open(self.agent, "w") as f:
            f.write(f'#!/bin/sh\nshift\nexec ip netns exec {self.b} sh -c "$*"\n')
        os.chmod(self.agent, 0o755)
        return self

    def limit(self, rate):
        """Both directions limited to `rate` (tc's units, e.g. 1gbit), or unlimited (None)."""
        for ns, dev in ((self.a, self.va), (self.b, self.vb)):
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root"],
                           stderr=subprocess.DEVNULL)
            if rate:
                sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate,
                   "burst", "256kb", "latency", "100ms")

    def mpirun(self):
        # --bind-to none: each "host" would bind its one rank to core 0, both ranks then sharing one core.
        return ["ip", "netns", "exec", self.a, "mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", "2", "-H",
                "10.234.0.1,10.234.0.2", "--mca", "plm_rsh_agent", self.agent, "--mca", "btl", "tcp,self",
                "--mca", "btl_tcp_if_include", "10.234.0.0/30", "--mca", "oob_tcp_if_include", "10.234.0.0/30"]

    def __exit__(self, *exc):
        for ns in (self.a, self.b):
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
            for p in pids:
                subprocess.run(["kill", "-9", p], stderr=subprocess.DEVNULL)
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def train_args(attn, work, model_dir, steps, threads, overlap, tokenizer=True):
    sets = {
        "data.train_src": f"{work}/train.en", "data.train_tgt": f"{work}/train.de", "data.valid_src": "",
        "data.valid_tgt": "", "data.tokenizer": f"{work}/tok/spm.model", "model.d_model": 128, "model.heads": 4,
        "model.encoder_layers": 2, "model.decoder_layers": 2, "model.d_ff": 512, "model.dropout": 0,
        "train.max_tokens": 1024, "train.accumulate": 2, "train.log_every": 5, "train.checkpoint_every": 0,
        "train.checkpoint_minutes": 0, "train.decay": "none", "train.allreduce_overlap": str(overlap).lower(),
    }
    if overlap is None:  # an attn without the setting
        del sets["train.allreduce_overlap"]
    if not tokenizer:  # train one (vocab 4000) instead
        del sets["data.tokenizer"]
        sets["data.vocab_size"] = 4000
    out = [attn, "train", "--model-dir", model_dir, "--max-steps", str(steps), "--threads", str(threads),
           "--precision", "fp32"]
    for k, v in sets.items():
        out += ["--set", f"{k}={v}"]
    return out


def measure(model_dir, log):
    """Steady state: from the first logged window's end to the last (the first has the warm-up)."""
    events = [e for e in map(json.loads, open(f"{model_dir}/train_log.jsonl")) if e.get("event") == "train"]
    first, last = events[0], events[-1]
    seconds = last["elapsed"] - first["elapsed"]
    steps = last["step"] - first["step"]
    wait = sum(e.get("allreduce_wait_s", 0.0) for e in events[1:])
    weights = int(re.search(r"(\d+) weights", log).group(1))
    return {"step_s": seconds / steps, "tokens_per_s": (last["tokens_seen"] - first["tokens_seen"]) / seconds,
            "comm_fraction": wait / seconds, "wait_s": wait / steps, "weights": weights}


def run(cmd, model_dir):
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return measure(model_dir, p.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2, help="each run this many times, interleaved; the fastest kept")
    ap.add_argument("--before", default="", help="an attn without overlap (summing after backward), for comparison")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    attn = os.path.realpath(args.attn)
    work = tempfile.mkdtemp(prefix="attn-scaling-")
    try:
        for side in ("en", "de"):
            with open(f"{args.shared}/data/mt-ende/train.{side}") as f, open(f"{work}/train.{side}", "w") as g:
                g.writelines(line for _, line in zip(range(20000), f))
        sh(*train_args(attn, work, f"{work}/tok", 1, 2, True, tokenizer=False), capture_output=True)
        results = {}
        with Namespaces(work) as ns:
            for rep in range(args.repeat):  # interleaved, so that a burst of other load hits one repetition
                for k, (name, rate, cmd) in enumerate(runs(args, attn, work, ns)):
                    ns.limit(rate)
                    model_dir = f"{work}/run-{rep}-{k}"
                    r = run(cmd(model_dir), model_dir)
                    if name not in results or r["step_s"] < results[name]["step_s"]:
                        results[name] = r
        report(results)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def runs(args, attn, work, ns):
    """(name, the veth's rate, command for a model directory) of every run."""
    lo = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", "2", "--mca", "btl", "tcp,self",
          "--mca", "btl_tcp_if_include", "lo"]
    out = [("1 process x 2 threads", None, lambda d: train_args(attn, work, d, args.steps, 2, True))]
    for overlap in (False, True):
        out.append((f"2 ranks x 1 thread, TCP loopback, overlap {overlap}", None,
                    lambda d, o=overlap: lo + train_args(attn, work, d, args.steps, 1, o)))
    for rate in (None, "1gbit", "100mbit"):
        for overlap in (False, True):
            out.append((f"2 ranks x 1 thread, two namespaces, {rate or 'unlimited'}, overlap {overlap}", rate,
                        lambda d, o=overlap: ns.mpirun() + train_args(attn, work, d, args.steps, 1, o)))
    # Open MPI's own choice for 2 ranks (binomial: reduce, then broadcast), which attn replaces by the ring.
    binomial = ns.mpirun() + ["--mca", "coll_libnbc_iallreduce_algorithm", "2"]
    out.append(("2 ranks x 1 thread, two namespaces, 100mbit, overlap False, binomial", "100mbit",
                lambda d: binomial + train_args(attn, work, d, args.steps, 1, False)))
    if args.before:
        before = os.path.realpath(args.before)
        for rate in (None, "1gbit"):
            out.append((f"before: 2 ranks x 1 thread, two namespaces, {rate or 'unlimited'}", rate,
                        lambda d: ns.mpirun() + train_args(before, work, d, args.steps, 1, None)))
    return out


def report(results):
    print("| run | step (s) | tgt tokens/s | waiting for the sums |")
    print("|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['step_s']:.3f} | {r['tokens_per_s']:.0f} | {100 * r['comm_fraction']:.0f}% |")
    base = results["2 ranks x 1 thread, two namespaces, unlimited, overlap False"]
    t_c = base["step_s"] - base["wait_s"]
    size = 4 * base["weights"]
    print(f"\nmodel: t_c = {t_c:.3f} s (unlimited veth, no overlap: step less wait), S = {size / 1e6:.2f} MB")
    for rate, bits in (("1gbit", 1e9), ("100mbit", 1e8)):
        buckets = max(1, -(-size // (1024 * 1024)))
        predicted = t_c + 2 * (2 - 1) / 2 * size * WIRE * 8 / bits + 2 * buckets * ALPHA
        comm = predicted - t_c
        for overlap in (False, True):
            r = results[f"2 ranks x 1 thread, two namespaces, {rate}, overlap {overlap}"]
            print(f"{rate}, overlap {overlap}: step predicted {predicted:.3f} s (no overlap), measured {r['step_s']:.3f} s"
                  f" ({100 * (r['step_s'] / predicted - 1):+.0f}%); communication predicted {comm:.3f} s, "
                  f"waited {r['wait_s']:.3f} s")
    # N hosts, one rank of this run's work each (train.accumulate = N: one batch per rank and step).
    tokens_per_batch = base["tokens_per_s"] * base["step_s"] / 2
    print(f"\npredicted for N hosts (t_c {t_c:.3f} s per batch, {tokens_per_batch:.0f} target tokens per batch):")
    print("| N | 1 Gbit/s: step (s) | tokens/s | 10 Gbit/s: step (s) | tokens/s |")
    print("|---|---|---|---|---|")
    for n in (1, 2, 4, 8, 16):
        row = [str(n)]
        for bits in (1e9, 1e10):
            buckets = max(1, -(-size // (1024 * 1024)))
            t = t_c + (2 * (n - 1) / n * size * WIRE * 8 / bits + 2 * (n - 1) * buckets * ALPHA if n > 1 else 0)
            row += [f"{t:.3f}", f"{n * tokens_per_batch / t:.0f}"]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
