#!/usr/bin/env bash
# Scores a translation model on the whole dev and test_id sets, greedy and beam 4, with BLEU and
# chrF (sacreBLEU's definitions). Usage:
#   scripts/eval_translation.sh MODEL_DIR [CHECKPOINT_DIR]
# With a checkpoint (e.g. MODEL_DIR/checkpoints/step-00001200), its weights are scored with the
# model directory's config.json and spm.model. Prints one line per set and search, and writes the
# hypotheses beside the weights (*.hyp). SETS, BEAMS and THREADS narrow it down, e.g.
#   SETS=dev BEAMS=1 THREADS=1 scripts/eval_translation.sh runs/ende
set -euo pipefail
cd "$(dirname "$0")/.."
model=$1
weights=${2:-$model}
data=${DATA:-data/mt-ende}
attn=${ATTN:-build/attn}
sets=${SETS:-dev test_id}
beams=${BEAMS:-1 4}
thread_args=()
if [[ -n "${THREADS:-}" ]]; then thread_args=(--threads "$THREADS"); fi
dir=$model
if [[ "$weights" != "$model" ]]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  cp "$model/config.json" "$model/spm.model" "$dir/"
  ln -s "$(realpath "$weights/model.safetensors")" "$dir/model.safetensors"
fi
for set in $sets; do
  for beam in $beams; do
    hyp="$weights/$set.beam$beam.hyp"
    "$attn" translate --model "$dir" --beam "$beam" "${thread_args[@]}" < "$data/$set.en" > "$hyp.tmp"
    mv "$hyp.tmp" "$hyp"
    printf '%s\t%s\tbeam %s\t%s\n' "$weights" "$set" "$beam" \
      "$("$attn" bleu --ref "$data/$set.de" --chrf < "$hyp" | tr '\n' ' ')"
  done
done
