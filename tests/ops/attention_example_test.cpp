// Seed 004's worked example: q.k1 = 112, q.k2 = 96, d_k = 64 -> scores 14 and 12 ->
// softmax 0.8808, 0.1192.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "attn/ops/attention.h"

namespace attn {
namespace {

TEST(SeedExample, ScaledDotProductOf112And96) {
  // q = 8 * e_0 (d_k = 64); k1 = 14 e_0, k2 = 12 e_0: q.k1 = 112, q.k2 = 96.
  Tensor q = Tensor::zeros({1, 1, 1, 64}), k = Tensor::zeros({1, 1, 2, 64});
  q.data<float>()[0] = 8.0f;
  k.data<float>()[0] = 14.0f;
  k.data<float>()[64] = 12.0f;
  // v = identity rows, so the output is the attention weights themselves.
  Tensor v = Tensor::zeros({1, 1, 2, 2});
  v.data<float>()[0] = 1.0f;
  v.data<float>()[3] = 1.0f;
  Tensor weights;
  AttentionOptions opt;
  opt.weights = &weights;
  Var out = scaled_dot_product_attention(Var(q), Var(k), Var(v), AttentionMask{}, opt);
  double p1 = 1.0 / (1.0 + std::exp(-2.0)), p2 = 1.0 - p1;  // softmax(14, 12)
  std::printf("[seed 004] weights %.4f %.4f (expected 0.8808 0.1192)\n", weights.at({0, 0, 0, 0}),
              weights.at({0, 0, 0, 1}));
  EXPECT_NEAR(weights.at({0, 0, 0, 0}), p1, 1e-6);
  EXPECT_NEAR(weights.at({0, 0, 0, 1}), p2, 1e-6);
  EXPECT_NEAR(weights.at({0, 0, 0, 0}), 0.8808, 5e-5);
  EXPECT_NEAR(weights.at({0, 0, 0, 1}), 0.1192, 5e-5);
  EXPECT_NEAR(out.value().at({0, 0, 0, 0}), 0.8808, 5e-5);
}

}  // namespace
}  // namespace attn
