"""Cut a held-out test split out of a classification set's train.tsv (never out of dev.tsv, which
chooses the configuration), deterministically, so a final figure can be scored once on texts that
neither training nor model selection has seen.

  /usr/bin/python3 scripts/split_heldout.py --data ../shared/data/cls-zh-poetry --out runs/zh-heldout \
      [--test 2000] [--seed 31]

Writes OUT/train.tsv (train.tsv minus the test texts, in their original order), OUT/test.tsv (the
test texts, in their original order), and copies OUT/dev.tsv and OUT/labels.txt (if present), so OUT
is a complete data directory. The input directory is only read; OUT must be a different directory.

Sampling is stratified with equal allocation: --test / (number of labels) texts from each label,
as the sets' dev.tsv files are built (zh-poetry: 500 per label), drawn with Python's
random.Random(seed) from each label's lines in file order, so the same arguments give the same
files on every machine. A label with too few lines is an error naming it (not a silent shortfall).
Every input line must be label<TAB>text; a malformed line is an error naming file and line."""
import argparse, os, random, shutil, sys


def read_lines(path):
    """The file's lines (without newline); malformed ones stop the run with file:line."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            label, tab, text = line.partition("\t")
            if not tab or not label or not text.strip():
                sys.exit(f"{path}:{n}: expected label<TAB>text, got {line[:60]!r}")
            rows.append((label, line))
    return rows


def choose_test(rows, test, seed):
    """Indices of the test lines: test / labels from each label, seeded, file order inside a label."""
    by_label = {}
    for i, (label, _) in enumerate(rows):
        by_label.setdefault(label, []).append(i)
    labels = sorted(by_label)
    if test % len(labels):
        sys.exit(f"--test {test} is not a multiple of the {len(labels)} labels (equal allocation)")
    per_label = test // len(labels)
    rng = random.Random(seed)
    chosen = set()
    for label in labels:  # sorted, so the random stream is consumed in a fixed order
        if len(by_label[label]) <= per_label:
            sys.exit(f"label {label!r} has {len(by_label[label])} training lines, needs more than {per_label}")
        chosen.update(rng.sample(by_label[label], per_label))
    return chosen


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="directory with train.tsv (and dev.tsv, labels.txt)")
    p.add_argument("--out", required=True, help="new data directory (not --data)")
    p.add_argument("--test", type=int, default=2000, help="test texts, a multiple of the number of labels")
    p.add_argument("--seed", type=int, default=31)
    a = p.parse_args()
    if os.path.realpath(a.out) == os.path.realpath(a.data):
        sys.exit("--out must differ from --data: the input directory is never modified")
    rows = read_lines(os.path.join(a.data, "train.tsv"))
    chosen = choose_test(rows, a.test, a.seed)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "train.tsv"), "w", encoding="utf-8") as tr, \
            open(os.path.join(a.out, "test.tsv"), "w", encoding="utf-8") as te:
        for i, (_, line) in enumerate(rows):
            (te if i in chosen else tr).write(line + "\n")
    for name in ("dev.tsv", "labels.txt"):
        if os.path.exists(os.path.join(a.data, name)):
            shutil.copyfile(os.path.join(a.data, name), os.path.join(a.out, name))
    print(f"{a.out}: train.tsv {len(rows) - len(chosen)} lines, test.tsv {len(chosen)} lines "
          f"(seed {a.seed}, {a.test // len({l for l, _ in rows})} per label)")


if __name__ == "__main__":
    main()
