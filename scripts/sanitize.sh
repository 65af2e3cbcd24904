#!/usr/bin/env bash
# Builds attn and its tests with AddressSanitizer and UndefinedBehaviorSanitizer and runs the whole
# unit suite under them. Any report fails the run: undefined behaviour aborts
# (-fno-sanitize-recover=all) and ASan stops at its first error, leaks included.
# The build is clang's, in build-asan/, the same configuration scripts/fuzz.sh builds its fuzzers
# in (ATTN_FUZZ adds only libFuzzer's coverage counters), so the two scripts share one build.
#
# --thread: ThreadSanitizer instead, in build-tsan/, over the programs with threads of attn's own:
# the serve tests (batcher, HTTP server, load, drain; the attn binary they start is built with TSan
# too) and the library's test of models searched from several std::threads at once. One OpenMP
# thread, and accesses made inside libraries TSan does not instrument (clang's libomp, Debian's
# cpp-httplib) ignored (ignore_noninstrumented_modules): their own synchronisation is invisible to
# it, so their internals looked like races (scripts/tsan.supp says which). attn's code, and every
# access it makes to memory those libraries share with it, is checked. Other reports are
# suppressed only as scripts/tsan.supp lists, each with the reason it is not attn's race.
#
# Usage: scripts/sanitize.sh [ctest arguments, e.g. -R test_io; the distributed tests run only without them]
#        scripts/sanitize.sh --thread [gtest arguments, e.g. --gtest_filter=ServeApi.*]
# Environment: ATTN_SANITIZE_DIR (default build-asan, build-tsan with --thread), ATTN_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${ATTN_JOBS:-$(nproc)}"
source scripts/sanitize_config.sh
start=$(date +%s)
status=0
if [ "${1:-}" = --thread ]; then
  shift
  dir="${ATTN_SANITIZE_DIR:-build-tsan}"
  configure_thread_sanitized "$dir"
  cmake --build "$dir" -j"$jobs" --target attn test_serve test_precision
  built=$(date +%s)
  export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
  "$dir/test_serve" "$@" || status=$?
  "$dir/test_precision" --gtest_filter='ConcurrentModels.*:PrecisionTest.SettingDefaultsFormsAndNames' || status=$?
  echo "sanitize --thread: build $((built - start)) s, tests $(( $(date +%s) - built )) s, exit $status" >&2
  exit $status
fi
dir="${ATTN_SANITIZE_DIR:-build-asan}"
configure_sanitized "$dir"
cmake --build "$dir" -j"$jobs"
built=$(date +%s)
# Left out, each said on every run:
echo "sanitize: not run: install.* (builds a consumer project without the sanitizer flags: packaging, which the Release suite checks)" >&2
echo "sanitize: not run: the python module's tests (the sanitized build has no module: a module with ASan needs libasan preloaded into /usr/bin/python3, whose own allocations ASan would then check)" >&2
ctest --test-dir "$dir" -j"$jobs" --output-on-failure -E '^install\.|^DataParallel\.' "$@" || status=$?
# The distributed tests (mpirun, 2 ranks of the sanitized attn) on a whole run: OpenMPI's own leaks
# are suppressed by its libraries' names (scripts/lsan.supp), which only the slow unwinder's stacks
# reach (too slow for the rest of the suite).
if [ $# -eq 0 ]; then
  ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" \
    ctest --test-dir "$dir" -j"$jobs" --output-on-failure -R '^DataParallel\.' || status=$?
fi
echo "sanitize: build $((built - start)) s, tests $(( $(date +%s) - built )) s, ctest exit $status" >&2
exit $status
