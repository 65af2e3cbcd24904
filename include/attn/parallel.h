// Exceptions and OpenMP: an exception that leaves an OpenMP region's structured block ends the
// program (std::terminate), whatever main() catches. Code that can throw inside a region (an
// allocation, a check, a library call) runs under RegionErrors::guard, and the first exception is
// rethrown after the region, on the calling thread.
//
// A region of one thread is not free: libgomp builds a team for it (an aligned allocation of ~2
// KB, which also sends glibc's malloc to consolidate its fast bins) and tears it down again at
// every entry, even under if(false). A decoder step on one thread (a server's batcher, --threads
// 1) enters dozens of regions, so code asks region_threads() first and runs a plain loop at 1.
#pragma once

#include <omp.h>

#include <cstdint>
#include <exception>

namespace attn {

class RegionErrors {
 public:
  // Runs f(); an exception it throws is kept (the first one) instead of leaving the region.
  template <class F>
  void guard(F&& f) noexcept {
    try {
      f();
    } catch (...) {
#pragma omp critical(attn_region_errors)
      if (!first_) first_ = std::current_exception();
    }
  }
  // After the region: rethrows the first exception kept, if any.
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::exception_ptr first_;
};

// The threads an OpenMP region entered here would get: omp_get_max_threads(), or 1 when the work
// is not worth a region (!worth) or the caller already runs inside one.
int region_threads(bool worth = true);

// body(i) for every i in [0, n): over the threads of one region (static schedule, or dynamic for
// items of unequal cost) when region_threads(worth) > 1, else a plain loop and no region. An
// exception from body reaches the caller either way.
template <class Body>
void for_each_index(int64_t n, bool worth, Body&& body, bool dynamic = false) {
  const int threads = n > 1 ? region_threads(worth) : 1;
  if (threads == 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  RegionErrors errors;
  if (dynamic) {
#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (int64_t i = 0; i < n; ++i) errors.guard([&] { body(i); });
  } else {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; ++i) errors.guard([&] { body(i); });
  }
  errors.rethrow();
}

// body(t, threads) on each thread t of one region of region_threads(worth) threads; at 1, body(0,
// 1) with no region. For work split into one contiguous range a thread.
template <class Body>
void on_each_thread(bool worth, Body&& body) {
  const int threads = region_threads(worth);
  if (threads == 1) {
    body(0, 1);
    return;
  }
  RegionErrors errors;
#pragma omp parallel num_threads(threads)
  errors.guard([&] { body(omp_get_thread_num(), omp_get_num_threads()); });
  errors.rethrow();
}

}  // namespace attn
