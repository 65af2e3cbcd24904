// Dropout cannot share PyTorch's random stream, so it is checked for what defines it: the
// fraction dropped, the 1/(1-p) scale, the identity in evaluation, and a mask that depends only
// on the seed (not on the thread count).
#include <gtest/gtest.h>
#include <omp.h>

#include "attn/ops/dropout.h"

namespace attn {
namespace {

TEST(Dropout, DropsPAndScalesTheRest) {
  Tensor x = Tensor::full({200, 500}, 1.0f);
  Rng rng(3);
  Var y = dropout(Var(x), 0.3f, rng, true);
  int64_t zeros = 0;
  for (float v : y.value().to_vector()) {
    if (v == 0.0f) ++zeros;
    else EXPECT_FLOAT_EQ(v, 1.0f / 0.7f);
  }
  EXPECT_NEAR(static_cast<double>(zeros) / x.numel(), 0.3, 0.005);
  EXPECT_EQ(rng.counter, static_cast<uint64_t>(x.numel()));
}

TEST(Dropout, IdentityInEvaluation) {
  Tensor x = Tensor::full({4, 4}, 2.0f);
  Rng rng(3);
  Var v(x);
  EXPECT_EQ(dropout(v, 0.5f, rng, false).value().storage(), x.storage());
}

TEST(Dropout, SameMaskForAnyThreadCount) {
  Tensor a = Tensor::empty({100000}), b = Tensor::empty({100000});
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  dropout_mask(a.data<float>(), a.numel(), 0.1f, 11, 5);
  omp_set_num_threads(2);
  dropout_mask(b.data<float>(), b.numel(), 0.1f, 11, 5);
  omp_set_num_threads(saved);
  EXPECT_EQ(a.to_vector(), b.to_vector());
}

}  // namespace
}  // namespace attn
