// RegionErrors: an exception thrown inside an OpenMP region reaches the caller as itself instead
// of ending the program.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <new>
#include <vector>

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

// for_each_index and on_each_thread: every index once; on one thread (or work not worth a
// region) no OpenMP region at all, since libgomp builds and frees a team even for one thread; an
// exception reaches the caller either way.
TEST(ForEachIndex, EveryIndexOnceAndNoRegionOnOneThread) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (bool worth : {false, true}) {
      std::vector<int> seen(100, 0);
      int in_region = 0;
      for_each_index(100, worth, [&](int64_t i) {
        ++seen[i];
        if (omp_get_level() > 0) {  // counts a region of one thread too
#pragma omp atomic
          ++in_region;
        }
      });
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 100) << threads << " threads, worth " << worth;
      EXPECT_EQ(in_region > 0, threads > 1 && worth) << threads << " threads, worth " << worth;
      int calls = 0, region = 0;
      on_each_thread(worth, [&](int t, int n) {
#pragma omp atomic
        ++calls;
        if (t == 0) region = omp_get_level() > 0 ? n : 0;
      });
      EXPECT_EQ(calls, threads > 1 && worth ? threads : 1);
      EXPECT_EQ(region, threads > 1 && worth ? threads : 0);
      EXPECT_THROW(for_each_index(8, worth, [](int64_t i) { if (i == 5) throw std::bad_alloc(); }), std::bad_alloc);
      EXPECT_THROW(on_each_thread(worth, [](int, int) { throw std::bad_alloc(); }), std::bad_alloc);
    }
  }
  // inside a region: one thread, no nested region
  int nested = 0;
#pragma omp parallel num_threads(2)
  {
    const int r = region_threads();
#pragma omp atomic
    nested += r;
  }
  EXPECT_EQ(nested, 2);
  omp_set_num_threads(saved);
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
