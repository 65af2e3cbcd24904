// fp32 products on a weight packed once for inference (pack_weight(Precision::fp32): panels on
// AVX2, oneDNN's own layout elsewhere) through gemm_packed and linear(), against a double
// reference and the plain product.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attn/autodiff/var.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/ops/matmul.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

std::vector<float> values(int64_t count, uint64_t seed) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<float>(random_bits(seed, i) >> 40) / 16777216.0f - 0.5f;
  return v;
}

// y = x W^T (+ bias) + beta y0 through gemm_packed, each output within the bound of an f32 sum of
// k + 2 terms, (k + 3) u (sum_p |x_ip W_jp| + |bias_j| + |beta y0_ij|), of the double reference;
// the padding of y's rows untouched. W has row stride ldw > k, x and y padded rows.
void expect_matches(int64_t m, int64_t n, int64_t k, float beta, bool with_bias) {
  const int64_t ldx = k + 3, ldy = n + 5, ldw = k + 2;
  const std::vector<float> x = values(m * ldx, 1 + m), w = values(n * ldw, 2 + n), y0 = values(m * ldy, 3 + k),
                           bias = values(n, 4);
  std::vector<float> y = y0;
  const auto packed = pack_weight(Precision::fp32, w.data(), n, k, ldw);
  PackedGemmArgs g{m, x.data(), ldx, beta, y.data(), ldy};
  if (with_bias) g.bias = bias.data();
  gemm_packed(g, *packed);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = with_bias ? bias[j] : 0.0, magnitude = std::fabs(sum);
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(x[i * ldx + p]) * w[j * ldw + p];
        magnitude += std::fabs(static_cast<double>(x[i * ldx + p]) * w[j * ldw + p]);
      }
      const double old = beta == 0.0f ? 0.0 : static_cast<double>(beta) * y0[i * ldy + j];
      const double tol = (k + 3) * 0x1p-24 * (magnitude + std::fabs(old));
      ASSERT_NEAR(y[i * ldy + j], sum + old, tol)
          << "m=" << m << " n=" << n << " k=" << k << " beta=" << beta << " bias=" << with_bias << " at " << i << ", " << j;
    }
    for (int64_t j = n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], y0[i * ldy + j]) << "padding of row " << i;
  }
}

// Row counts that oneDNN's primitives take whole or in row pieces (17 = 16 + 1, 60 = 56 + 4,
// 300 = 256 + 40 + 4), odd n and k, beta 0 / 1 / other, with and without a bias.
TEST(GemmPackedF32, MatchesReference) {
  int variant = 0;
  for (int64_t m : {1, 4, 16, 17, 33, 60, 300})
    for (int64_t n : {1, 17, 70})
      for (int64_t k : {1, 37, 300}) {
        const float betas[] = {0.0f, 1.0f, -0.75f};
        const float beta = betas[variant % 3];
        expect_matches(m, n, k, beta, beta == 0.0f && variant % 2 == 0);
        ++variant;
      }
  expect_matches(64, 2000, 512, 0.0f, true);  // split among threads
}

// linear() in fp32 inference with W frozen: the rows the dispatch table gives to a packed W
// (f32_packed_for) make it, once; the others use W itself, making nothing; both equal the plain
// product to float rounding.
TEST(GemmPackedF32, LinearUnderTheInferenceForm) {
  const int64_t in = 300, out = 90;
  Var W(Tensor::from_vector(values(out * in, 7), {out, in}), false);
  Var b(Tensor::from_vector(values(out, 8), {out}), false);
  for (int64_t rows : {1, 4, 16, 17, 32, 48, 49, 64, 200}) {
    Var x(Tensor::from_vector(values(rows * in, 9), {rows, in}), false);
    const std::vector<float> plain = linear(x, W, b).value().to_vector();
    const WeightForm frozen = inference_form(W.value(), Precision::fp32);
    const std::vector<float> cached = linear(x, W, b, frozen).value().to_vector();
    EXPECT_EQ(converted_bytes(frozen) > 0, f32_packed_for(rows)) << "rows=" << rows;
    for (size_t i = 0; i < plain.size(); ++i) ASSERT_NEAR(cached[i], plain[i], 2e-5) << "rows=" << rows << " at " << i;
  }
}

}  // namespace
}  // namespace attn
