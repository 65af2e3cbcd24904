// RegionErrors: an exception thrown inside an OpenMP region reaches the caller as itself instead
// of ending the program.
#include <gtest/gtest.h>

#include <omp.h>

#include <new>

#include "attn/error.h"
#include "attn/parallel.h"
#include "attn/tensor/tensor.h"

namespace attn {
namespace {

TEST(RegionErrors, TheFirstExceptionLeavesTheRegionOnTheCaller) {
  RegionErrors errors;
  int done = 0;
#pragma omp parallel for num_threads(2) reduction(+ : done)
  for (int i = 0; i < 64; ++i)
    errors.guard([&] {
      if (i == 37) throw std::bad_alloc();
      ++done;
    });
  EXPECT_THROW(errors.rethrow(), std::bad_alloc);
  EXPECT_EQ(done, 63) << "the other iterations ran";
  RegionErrors none;
#pragma omp parallel num_threads(2)
  none.guard([] {});
  EXPECT_NO_THROW(none.rethrow());
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// A refused allocation is a message with the size, and leaves the live-bytes count as it was.
TEST(Storage, RefusedAllocationIsAMessageAndNotCounted) {
  const size_t before = storage_cache_stats().live, peak = storage_cache_stats().peak_live;
  try {
    Tensor::empty({int64_t{1} << 40, 1 << 10});  // 4 PiB
    FAIL() << "a 4 PiB tensor was allocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(storage_cache_stats().live, before);
  // Nor in the peak, which bounds the cache: once it counted, and the cache had no bound after.
  EXPECT_EQ(storage_cache_stats().peak_live, peak);
}

}  // namespace
}  // namespace attn
