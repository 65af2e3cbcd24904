#!/usr/bin/env bash
# Builds attn and its tests with AddressSanitizer and UndefinedBehaviorSanitizer and runs the whole
# unit suite under them. Any report fails the run: undefined behaviour aborts
# (-fno-sanitize-recover=all) and ASan stops at its first error, leaks included.
# The build is clang's, in build-asan/, the same configuration scripts/fuzz.sh builds its fuzzers
# in (ATTN_FUZZ adds only libFuzzer's coverage counters), so the two scripts share one build.
# Usage: scripts/sanitize.sh [ctest arguments, e.g. -R test_io]
# Environment: ATTN_SANITIZE_DIR (default build-asan), ATTN_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${ATTN_SANITIZE_DIR:-build-asan}"
jobs="${ATTN_JOBS:-$(nproc)}"
source scripts/sanitize_config.sh
configure_sanitized "$dir"
start=$(date +%s)
cmake --build "$dir" -j"$jobs"
built=$(date +%s)
status=0
# The install test builds a consumer project without the sanitizer flags: it checks packaging,
# which the Release suite covers.
ctest --test-dir "$dir" -j"$jobs" --output-on-failure -E '^install\.' "$@" || status=$?
echo "sanitize: build $((built - start)) s, tests $(( $(date +%s) - built )) s, ctest exit $status" >&2
exit $status
