// Exceptions and OpenMP: an exception that leaves an OpenMP region's structured block ends the
// program (std::terminate), whatever main() catches. Code that can throw inside a region (an
// allocation, a check, a library call) runs under RegionErrors::guard, and the first exception is
// rethrown after the region, on the calling thread.
#pragma once

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

}  // namespace attn
