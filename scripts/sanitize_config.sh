# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: configures the clang build with
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer coverage (ATTN_FUZZ), and sets the
# sanitizers' run-time options.
configure_sanitized() {
  local dir="$1" launcher=()
  command -v clang++ >/dev/null || { echo "needs clang++ (Debian package clang)" >&2; exit 2; }
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -O1: fast enough for the suite; assertions stay on (no NDEBUG); line tables for the reports.
  cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DATTN_FUZZ=ON "${launcher[@]}" >/dev/null
}
# ThreadSanitizer's build (scripts/sanitize.sh --thread): no fuzzers, no ASan.
configure_thread_sanitized() {
  local dir="$1" launcher=()
  command -v clang++ >/dev/null || { echo "needs clang++ (Debian package clang)" >&2; exit 2; }
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DATTN_TSAN=ON "${launcher[@]}" >/dev/null
}
# halt_on_error: the first race fails the run. second_deadlock_stack: both stacks of a lock-order report.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$PWD/scripts/tsan.supp}"
# detect_leaks: every allocation attn makes is owned (RAII), so a leak is a finding too.
# allocator_may_return_null: a refused allocation returns null as malloc does, so attn's own "out of
# memory" message (Storage::allocate) is what is tested, not ASan's abort.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:allocator_may_return_null=1}"
# Leaks of libraries attn calls, each shown not to be attn's (the file says which and why).
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
