// RegionErrors: an exception thrown inside an OpenMP region reaches the caller as itself instead
// of ending the program.
#include <gtest/gtest.h>

#include <omp.h>

#include <new>

#include "attn/error.h"
#include "attn/parallel.h"

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
