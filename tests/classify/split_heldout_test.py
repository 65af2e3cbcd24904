"""scripts/split_heldout.py on a synthetic set: the split is deterministic, disjoint, complete
(train + test is the original, line for line), takes the same number from each label, leaves the
input untouched, and refuses --out == --data, a malformed line (naming file:line) and a label too
small for its share. Run by ctest (classify.split_heldout) or directly with /usr/bin/python3."""
import collections, hashlib, os, random, subprocess, sys, tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "split_heldout.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    tmp = tempfile.mkdtemp()
    data = os.path.join(tmp, "data")
    os.makedirs(data)
    rng = random.Random(7)
    lines = [f"{lab}\ttext {i} {rng.random():.6f}" for i, lab in enumerate(rng.choice("abc") for _ in range(300))]
    open(os.path.join(data, "train.tsv"), "w").write("\n".join(lines) + "\n")
    open(os.path.join(data, "dev.tsv"), "w").write("a\tdev text\n")
    before = digest(os.path.join(data, "train.tsv"))
    outs = [os.path.join(tmp, f"out{k}") for k in (1, 2)]
    for out in outs:
        r = run("--data", data, "--out", out, "--test", "30", "--seed", "5")
        assert r.returncode == 0, r.stderr
    assert digest(os.path.join(data, "train.tsv")) == before, "input modified"
    for name in ("train.tsv", "test.tsv", "dev.tsv"):
        assert digest(os.path.join(outs[0], name)) == digest(os.path.join(outs[1], name)), f"{name} differs between runs"
    train = open(os.path.join(outs[0], "train.tsv")).read().splitlines()
    test = open(os.path.join(outs[0], "test.tsv")).read().splitlines()
    assert sorted(train + test) == sorted(lines) and not set(train) & set(test), "not a partition of train.tsv"
    assert [l for l in lines if l in set(test)] == test, "test lines not in file order"
    assert collections.Counter(l.split("\t")[0] for l in test) == {"a": 10, "b": 10, "c": 10}
    other = run("--data", data, "--out", os.path.join(tmp, "out3"), "--test", "30", "--seed", "6")
    assert other.returncode == 0 and digest(os.path.join(tmp, "out3", "test.tsv")) != digest(os.path.join(outs[0], "test.tsv"))
    r = run("--data", data, "--out", data)
    assert r.returncode != 0 and "--out must differ" in r.stderr, r.stderr
    r = run("--data", data, "--out", outs[0], "--test", "900")
    assert r.returncode != 0 and "needs more than 300" in r.stderr, r.stderr
    open(os.path.join(data, "train.tsv"), "a").write("no tab here\n")
    r = run("--data", data, "--out", outs[0], "--test", "30")
    assert r.returncode != 0 and "train.tsv:301:" in r.stderr, r.stderr
    print("split_heldout: all checks passed")


if __name__ == "__main__":
    main()
