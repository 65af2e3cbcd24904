#!/usr/bin/env bash
# The main job: on the shipped English->German corpus, train a Transformer for a bounded time
# (progress and ETA on stderr), translate a few held-out sentences, and print BLEU and chrF on a
# held-out sample. Usage: scripts/quickstart.sh [MINUTES] (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
scripts/data.sh
model=runs/quickstart
rm -rf "$model"
build/attn train --model-dir "$model" --max-minutes "$minutes" --set train.validate_every=0
echo
echo "== a few held-out sentences (test_id), beam 4:"
sed -n '1,8p' data/mt-ende/test_id.en > "$model/sample.en"
build/attn translate --model "$model" < "$model/sample.en" | paste -d '\n' "$model/sample.en" - | sed 's/^/  /'
echo
echo "== BLEU and chrF on the first 500 held-out sentences (test_id), beam 4:"
head -n 500 data/mt-ende/test_id.en > "$model/heldout.en"
head -n 500 data/mt-ende/test_id.de > "$model/heldout.de"
build/attn translate --model "$model" < "$model/heldout.en" > "$model/heldout.hyp" 2> "$model/heldout.err" ||
  { cat "$model/heldout.err" >&2; exit 1; }
cat "$model/heldout.err" >&2
cut=$(sed -n 's/^warning: \([0-9]*\) of .* outputs stopped at the maximum length.*/\1/p' "$model/heldout.err")
echo "outputs cut off at the maximum length (a piece repeated to the limit): ${cut:-0} of 500"
build/attn bleu --ref "$model/heldout.de" --chrf < "$model/heldout.hyp"
