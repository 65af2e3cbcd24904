#!/usr/bin/env bash
# The sanitizer sweep (issue 50): every libFuzzer target for RUNS inputs (default 10^6) under ASan
# and UBSan; the server's tests under ASan and UBSan (test_serve starts the sanitized `attn serve`
# and loads it: concurrent clients, hostile traffic, slow and idle connections, drain); and the
# same under ThreadSanitizer (scripts/sanitize.sh --thread). Each stage's output goes to one log,
# with the commit, the CPU and each stage's time and exit; the sweep fails if any stage does.
# Takes two hours or more on 2 cores (the clang builds, then ~1.5 hours of the http target alone:
# 100-200 inputs/s under ASan on a Zen 4, falling as its corpus grows).
# Usage: scripts/sweep.sh [LOG]   (default docs/sweep/<date>.log; commit it when it is clean)
# Environment: RUNS (inputs per fuzz target, default 1000000), ATTN_JOBS (default nproc).
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-1000000}"
log="${1:-docs/sweep/$(date -u +%Y-%m-%d).log}"
mkdir -p "$(dirname "$log")"
: >"$log"
say() { echo "$*" | tee -a "$log" >&2; }
say "# scripts/sweep.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs/sweep' || echo ' (with uncommitted changes)')"
say "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') (family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2 | tr -d ' '); $(grep -m1 flags /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|avx512_vnni|amx_tile)$' | tr '\n' ' ')), $(nproc) cores; RUNS=$runs"
failed=()
stage() {  # stage NAME COMMAND...: runs it, its output into the log, and records its exit
  local name="$1" start status
  shift
  say ""
  say "## $name: $* (at commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs/sweep' || echo ', with uncommitted changes'))"
  start=$(date +%s)
  "$@" >>"$log" 2>&1
  status=$?
  say "## $name: exit $status in $(( $(date +%s) - start )) s"
  [ "$status" -eq 0 ] || failed+=("$name")
}
serve_asan() {  # attn and test_serve with ASan and UBSan (build-asan, the fuzzers' build)
  source scripts/sanitize_config.sh
  configure_sanitized build-asan
  cmake --build build-asan -j"${ATTN_JOBS:-$(nproc)}" --target attn test_serve >/dev/null || return 1
  OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive build-asan/test_serve
}
fuzz_two_lanes() {  # the http target (the slowest: a request through the server) beside all the others
  local others=() status=0
  for f in fuzz/main_*.cpp; do n=$(basename "$f" .cpp); [ "${n#main_}" = http ] || others+=("${n#main_}"); done
  scripts/fuzz.sh --build-only || return 1
  scripts/fuzz.sh --built --runs "$runs" http >"$log.http" 2>&1 &
  local http=$!
  scripts/fuzz.sh --built --runs "$runs" "${others[@]}" || status=1
  wait "$http" || status=1
  cat "$log.http" && rm -f "$log.http"
  return $status
}
stage fuzz fuzz_two_lanes
stage asan-ubsan-serve serve_asan
stage tsan-serve scripts/sanitize.sh --thread
say ""
if [ ${#failed[@]} -gt 0 ]; then
  say "# sweep: FAILED: ${failed[*]} (the log: $log)"
  exit 1
fi
say "# sweep: clean (fuzz, asan-ubsan-serve, tsan-serve)"
