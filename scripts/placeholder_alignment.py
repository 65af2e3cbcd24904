#!/usr/bin/python3
"""How often a translation model's word alignment (attn translate --alignment hard, from its
encoder-decoder attention) links each format placeholder of the source (%s, %d, %1$s, %qD, %L,
%1, ...) to the same placeholder in its output.

Sentences: the test set's pairs whose source and reference both hold a placeholder. A source
placeholder P (its k-th occurrence) matches the k-th occurrence of P in the output (printf order is
fixed, so repeated %s keep their order). It counts as aligned when some output piece of that
matching placeholder has, as its argmax source piece, a piece of P. Also printed: how many source
placeholders the output keeps at all, and the share aligned among those kept.
    /usr/bin/python3 scripts/placeholder_alignment.py --attn build/attn --model /work/models/hour \
        --data ../shared/data/mt-ende [--split test_id] [--layer 0] [--beam 4] [--threads 1]
"""
import argparse
import json
import os
import re
import subprocess
import sys

# printf (%s, %-5d, %1$s, %.*s, %lu), GCC's diagnostics (%qD, %q#D, %qE, %L, %C) and Qt's (%1).
PLACEHOLDER = re.compile(r"%(?:\d+\$)?[-+0#']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|ll|[hlLqzjtw])*[#+]?[a-zA-Z@]|%\d+")
WORD_START = "\u2581"


def spans(pieces):
    """The placeholders of a piece sequence: (text, occurrence, set of piece indices)."""
    text, owner = "", []
    for i, p in enumerate(pieces):
        t = p.replace(WORD_START, " ")
        text += t
        owner += [i] * len(t)
    seen, out = {}, []
    for m in PLACEHOLDER.finditer(text):
        k = seen.get(m.group(), 0)
        seen[m.group()] = k + 1
        out.append((m.group(), k, set(owner[m.start():m.end()])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attn", default="build/attn")
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "mt-ende"))
    ap.add_argument("--split", default="test_id")
    ap.add_argument("--layer", type=int, default=0, help="--alignment-layer (0: the second-to-last)")
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--show", type=int, default=0, help="print this many examples")
    a = ap.parse_args()
    src = open(os.path.join(a.data, a.split + ".en"), encoding="utf-8").read().split("\n")
    ref = open(os.path.join(a.data, a.split + ".de"), encoding="utf-8").read().split("\n")
    chosen = [s for s, r in zip(src, ref) if s and PLACEHOLDER.search(s) and PLACEHOLDER.search(r)]
    cmd = [a.attn, "translate", "--model", a.model, "--beam", str(a.beam), "--threads", str(a.threads),
           "--alignment", "hard", "--alignment-layer", str(a.layer), "--output-format", "jsonl"]
    out = subprocess.run(cmd, input="\n".join(chosen) + "\n", capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == len(chosen), f"{len(rows)} outputs for {len(chosen)} inputs"
    total = kept = aligned = 0
    shown = 0
    for text, row in zip(chosen, rows):
        links = [tuple(map(int, p.split("-"))) for p in row["alignment"].split()]
        source_of = {j: i for i, j in links}  # target piece -> its argmax source piece
        out_spans = {(t, k): pieces for t, k, pieces in spans(row["tokens"])}
        for t, k, src_pieces in spans(row["source_tokens"]):
            total += 1
            target = out_spans.get((t, k))
            if target is None:
                continue
            kept += 1
            ok = any(source_of.get(j) in src_pieces for j in target)
            aligned += ok
            if shown < a.show:
                shown += 1
                print(f"{'ok ' if ok else 'BAD'} {t}#{k}: {text} -> {row['text']} ||| {row['alignment']}", file=sys.stderr)
    print(f"model {a.model}, {a.split}: {len(chosen)} sentences whose source and reference hold placeholders, "
          f"{total} source placeholders")
    print(f"kept in the output: {kept} ({100.0 * kept / max(total, 1):.1f}%)")
    print(f"aligned to the matching placeholder: {aligned} of {total} = {100.0 * aligned / max(total, 1):.1f}% "
          f"({100.0 * aligned / max(kept, 1):.1f}% of those kept)")


if __name__ == "__main__":
    main()
