#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan and UBSan, in build-asan/ like
# scripts/sanitize.sh) and runs each for SECONDS_EACH seconds (default 60), starting from the seeds
# in fuzz/corpus/<target>/ and the kept failures in fuzz/regressions/<target>/. New corpus entries
# go to build-asan/fuzz-corpus/<target>/ (fuzz/corpus stays small); a failing input is written to
# fuzz/regressions/<target>/ and the script exits non-zero. Fix the cause, keep the input:
# tests/fuzz replays it in the ordinary suite.
# Usage: scripts/fuzz.sh [--build-only | --run-only | --built] [--runs N | SECONDS_EACH] [TARGET...]
#   --built: a run by hand (a new seed, the learned corpus kept) of the fuzzers already built, so
#   that several can run at once (scripts/sweep.sh).
#   --runs N: each target runs N inputs (libFuzzer's -runs) instead of for SECONDS_EACH seconds
#   (scripts/sweep.sh: 10^6 each).
#   (targets: ls fuzz/main_*.cpp). --build-only builds the fuzzers and stops (scripts/setup.sh);
#   --run-only runs the fuzzers already built, and exits 77 (ctest's "skipped") when they are not
#   (the suite's fuzz.smoke test).
# Environment: ATTN_SANITIZE_DIR (default build-asan), ATTN_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=all
case "${1:-}" in --build-only|--run-only|--built) mode="${1#--}"; shift ;; esac
runs="" seconds=60
if [ "${1:-}" = --runs ]; then
  runs="$2"; shift 2
else
  seconds="${1:-60}"; shift || true
fi
# -runs=N, or -max_total_time: how long each target runs
budget=(-max_total_time="$seconds")
[ -n "$runs" ] && budget=(-runs="$runs")
dir="${ATTN_SANITIZE_DIR:-build-asan}"
if [ "$mode" = all ] || [ "$mode" = build-only ]; then
  source scripts/sanitize_config.sh
  configure_sanitized "$dir"
  cmake --build "$dir" -j"${ATTN_JOBS:-$(nproc)}" --target fuzzers
  [ "$mode" = build-only ] && exit 0
else
  source scripts/sanitize_config.sh  # the sanitizers' run-time options
  for f in fuzz/main_*.cpp; do
    n=$(basename "$f" .cpp)
    [ -x "$dir/fuzz/fuzz_${n#main_}" ] || { echo "fuzz: $dir/fuzz/fuzz_${n#main_} not built (scripts/fuzz.sh --build-only)" >&2; exit 77; }
  done
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/main_*.cpp; do n=$(basename "$f" .cpp); targets+=("${n#main_}"); done
fi
# --run-only (the suite) fixes libFuzzer's seed and starts from the committed inputs alone: the
# same inputs in the same order on every run (fewer on a slower machine), so the suite passes or
# fails by the code, not by chance; runs by hand draw a new seed and keep what they learn.
seed_args=()
[ "$mode" = run-only ] && seed_args=(-seed=1)
# One worker a target, single-threaded: attn's loops would otherwise start an OpenMP team per input.
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
failed=()
for t in "${targets[@]}"; do
  work="$dir/fuzz-corpus/$t"
  # the suite starts from the committed inputs only, as a clean checkout does
  [ "$mode" = run-only ] && work="$dir/fuzz-corpus-smoke/$t" && rm -rf "$work"
  mkdir -p "$work" "fuzz/regressions/$t"
  if [ -n "$runs" ]; then echo "fuzz: $t for $runs inputs" >&2; else echo "fuzz: $t for ${seconds} s" >&2; fi
  # -rss_limit_mb / -malloc_limit_mb: a small input that makes attn ask for gigabytes is a finding.
  # The http target keeps a server's state between inputs (caches, metrics, the batcher's queues),
  # so most inputs end with more allocations than frees and libFuzzer would run a whole-heap leak
  # check after each of them: measured, two thirds of the target's time (60 against 209 inputs/s,
  # Zen 4, one core each, the same 1,500-input corpus). Its leaks are still looked for: LeakSanitizer
  # runs when the process exits, and the server's tests run under ASan with leak detection (sweep.sh).
  # Its ~50,000 features also make libFuzzer's entropic schedule (InputCorpus::UpdateFeatureFrequency,
  # a third of the time by perf) the next cost: the plain schedule, measured 107 against 68 inputs/s
  # on the same 1,500 inputs (Zen 4, one core).
  extra=()
  [ "$t" = http ] && extra=(-detect_leaks=0 -entropic=0)
  if ! "$dir/fuzz/fuzz_$t" "$work" "fuzz/corpus/$t" "fuzz/regressions/$t" "${budget[@]}" "${seed_args[@]}" "${extra[@]}" \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="fuzz/regressions/$t/" >"$dir/fuzz-$t.log" 2>&1; then
    failed+=("$t")
    grep -E "ERROR|SUMMARY|Test unit written" "$dir/fuzz-$t.log" >&2 || tail -20 "$dir/fuzz-$t.log" >&2
  fi
  grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::peak_rss_mb|cov: " "$dir/fuzz-$t.log" | tail -4 >&2 || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]} (inputs in fuzz/regressions/<target>/, logs in $dir/fuzz-<target>.log)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${runs:-${seconds} s} ${runs:+inputs} each, no failures" >&2
