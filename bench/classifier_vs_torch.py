"""Training and inference samples/s of seed 002's classifier, attn (bench_classifier) against
PyTorch (tests/classify/torch_classifier.py --bench), at the same thread count, interleaved
round by round so that both see the same machine load; prints each round and the median ratios.
  OMP_WAIT_POLICY=passive nice -n 19 /usr/bin/python3 bench/classifier_vs_torch.py \
      --bench build/bench_classifier [--threads 1] [--seconds 10] [--rounds 3]"""
import argparse, os, re, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def samples_per_s(output):
    """{"train": x, "inference": y} from either program's lines "<what> batch 128: ... N samples/s"."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(train|inference)\s.*?([\d.]+) samples/s", output, re.M)}


def run(cmd):
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    return samples_per_s(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", required=True, help="path of bench_classifier")
    p.add_argument("--threads", type=int, default=1); p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    torch_cmd = [sys.executable, os.path.join(HERE, "..", "tests", "classify", "torch_classifier.py"), "--bench",
                 "--threads", str(a.threads), "--seconds", str(a.seconds)]
    attn_cmd = [a.bench, str(a.threads), str(a.seconds)]
    print(f"load average before: {os.getloadavg()[0]:.2f}; {a.threads} thread(s), {a.seconds:g} s per measurement")
    ratios = {"train": [], "inference": []}
    for r in range(1, a.rounds + 1):
        x, t = run(attn_cmd), run(torch_cmd)
        for what in ratios:
            ratios[what].append(x[what] / t[what])
            print(f"round {r} {what:9s}  attn {x[what]:7.0f}  PyTorch {t[what]:7.0f} samples/s  ratio {x[what] / t[what]:.2f}",
                  flush=True)
    for what, v in ratios.items():
        print(f"median ratio attn/PyTorch {what:9s}: {statistics.median(v):.2f}  (rounds: {', '.join(f'{x:.2f}' for x in v)})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
