#!/bin/bash
# attn and CTranslate2 decoding under each OpenMP wait policy (unset, ACTIVE, PASSIVE), the
# systems and policies alternating, 2 rounds; prints tokens/s (docs/performance.md).
#   bench/wait_policy.sh [BUILD (build)] [WORK (/tmp/attn-compare, made by bench/compare.py)] [CT2 PYTHON]
BUILD=${1:-build}; WORK=${2:-/tmp/attn-compare}; CT2_PY=${3:-/work/venv-ct2/bin/python}
HERE=$(cd "$(dirname "$0")" && pwd)
B=$BUILD/bench_translate; M=$WORK/base_pre_ln; C=$WORK/base_pre_ln_ct2
CT="$CT2_PY $HERE/ct2_bench.py translate --model $C"
rate() { grep -o '"tokens_per_s": [0-9.]*' | awk '{printf "%.1f ", $2}'; }
for round in 1 2; do
  for cell in "1 32 src32" "4 1 src8" "4 32 src32" "1 1 src8"; do
    set -- $cell; beam=$1; batch=$2; src=$WORK/$3.ids
    common="--src $src --beam $beam --batch $batch --max-len 32 --threads 2"
    for pol in unset ACTIVE PASSIVE; do
      if [ $pol = unset ]; then E="env -u OMP_WAIT_POLICY"; else E="env OMP_WAIT_POLICY=$pol"; fi
      a=$($E $B --model $M $common --precision fp32,int8 2>/dev/null | rate)
      c=$($E $CT $common 2>/dev/null | rate)
      c8=$($E $CT $common --compute-type int8 2>/dev/null | rate)
      echo "round $round beam $beam batch $batch policy $pol: attn fp32,int8 $a ct2 $c ct2_int8 $c8"
    done
  done
done
