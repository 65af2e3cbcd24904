// fp32 weights packed once for inference: gemm_f32_panels (include/attn/kernels/gemm_panels.h,
// AVX2 and AVX-512) against a double-precision reference; and pack_weight(Precision::fp32) on every
// CPU (panels on AVX2; on AVX-512 panels and oneDNN's own layout, one made from the other as the
// dispatch table's rows ask: panels for 2-8 rows of a W of 512 x 512 and more) through gemm_packed
// and linear().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "attn/autodiff/var.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_panels.h"
#include "attn/kernels/precision.h"
#include "attn/ops/matmul.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

std::vector<float> values(int64_t count, uint64_t seed) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<float>(random_bits(seed, i) >> 40) / 16777216.0f - 0.5f;
  return v;
}

// sum_p a_p b_p in double, and sum_p |a_p b_p| (the rounding bound's scale).
struct Dot {
  double sum = 0.0, magnitude = 0.0;
};
Dot dot(const float* a, const float* b, int64_t k) {
  Dot d;
  for (int64_t p = 0; p < k; ++p) {
    d.sum += static_cast<double>(a[p]) * b[p];
    d.magnitude += std::fabs(static_cast<double>(a[p]) * b[p]);
  }
  return d;
}

// y = x W^T + beta y0 by gemm_f32_panels, each output within the bound of a sequential f32 sum
// of k + 1 terms, (k + 2) u (sum_p |x_ip W_jp| + |beta y0_ij|), of the double reference.
void expect_matches(int64_t m, int64_t n, int64_t k, float beta, int64_t pad) {
  const int64_t ldx = k + pad, ldy = n + pad;
  const std::vector<float> x = values(m * ldx, 1 + m), w = values(n * k, 2 + n), y0 = values(m * ldy, 3 + k);
  std::vector<float> y = y0;
  gemm_f32_panels(m, x.data(), ldx, pack_f32_panels(w.data(), n, k, k), beta, y.data(), ldy);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const auto [sum, magnitude] = dot(&x[i * ldx], &w[j * k], k);
      const double old = beta == 0.0f ? 0.0 : static_cast<double>(beta) * y0[i * ldy + j];
      const double tol = (k + 2) * 0x1p-24 * (magnitude + std::fabs(old));
      ASSERT_NEAR(y[i * ldy + j], sum + old, tol) << "m=" << m << " n=" << n << " k=" << k << " beta=" << beta
                                                  << " at " << i << ", " << j;
    }
  for (int64_t i = 0; i < m; ++i)  // the padding of y's rows is not touched
    for (int64_t j = n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], y0[i * ldy + j]);
}

// Every tile height (1-6 rows, and 7 or 8 left as 4 + 3 or 4 + 4), panels cut by n, k blocks cut
// by k (kPanelDepth = 256), row strides, beta.
TEST(GemmPanels, MatchesReference) {
  if (!f32_panels_available()) GTEST_SKIP() << "no AVX2 + FMA";
  int variant = 0;
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 13, 17, 20, 32, 48})
    for (int64_t n : {1, 15, 16, 17, 40})
      for (int64_t k : {1, 7, 256, 300, 513}) {
        const float betas[] = {0.0f, 1.0f, -0.75f};
        expect_matches(m, n, k, betas[variant % 3], variant % 2 == 0 ? 0 : 5);
        ++variant;
      }
  expect_matches(32, 2000, 512, 1.0f, 3);  // split among threads
}

// Each output is one chain of FMAs in k order whatever the tile: a row's bits do not depend on
// which rows come with it.
TEST(GemmPanels, SameBitsWhateverM) {
  if (!f32_panels_available()) GTEST_SKIP() << "no AVX2 + FMA";
  const int64_t n = 70, k = 600;
  const std::vector<float> x = values(48 * k, 5), w = values(n * k, 6);
  const F32Panels panels = pack_f32_panels(w.data(), n, k, k);
  std::vector<float> all(48 * n);
  gemm_f32_panels(48, x.data(), k, panels, 0.0f, all.data(), n);
  for (int64_t m : {1, 7, 8, 17, 32})
    for (int64_t first : {int64_t{0}, 48 - m}) {
      std::vector<float> out(m * n);
      gemm_f32_panels(m, x.data() + first * k, k, panels, 0.0f, out.data(), n);
      for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(out[i], all[first * n + i]) << "m=" << m << " from row " << first;
    }
}

// A bias in the epilogue gives the bits of y holding the bias with beta 1 (what linear() did
// before the panels took the bias).
TEST(GemmPanels, BiasEqualsBiasInY) {
  if (!f32_panels_available()) GTEST_SKIP() << "no AVX2 + FMA";
  const int64_t m = 20, n = 37, k = 300;
  const std::vector<float> x = values(m * k, 10), w = values(n * k, 11), bias = values(n, 12);
  const F32Panels panels = pack_f32_panels(w.data(), n, k, k);
  std::vector<float> in_y(m * n), in_epilogue(m * n, NAN);
  for (int64_t i = 0; i < m; ++i) std::copy(bias.begin(), bias.end(), in_y.begin() + i * n);
  gemm_f32_panels(m, x.data(), k, panels, 1.0f, in_y.data(), n);
  gemm_f32_panels(m, x.data(), k, panels, 0.0f, in_epilogue.data(), n, bias.data());
  for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(in_epilogue[i], in_y[i]) << "at " << i;
}

// y = x W^T (+ bias) + beta y0 through gemm_packed, each output within the bound of an f32 sum of
// k + 2 terms, (k + 3) u (sum_p |x_ip W_jp| + |bias_j| + |beta y0_ij|), of the double reference;
// the padding of y's rows untouched. W has row stride ldw > k, x and y padded rows.
void expect_packed_matches(int64_t m, int64_t n, int64_t k, float beta, bool with_bias) {
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
      const Dot d = dot(&x[i * ldx], &w[j * ldw], k);
      const double b = with_bias ? bias[j] : 0.0, sum = d.sum + b, magnitude = d.magnitude + std::fabs(b);
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
        expect_packed_matches(m, n, k, beta, beta == 0.0f && variant % 2 == 0);
        ++variant;
      }
  expect_packed_matches(64, 2000, 512, 0.0f, true);  // split among threads
}

// One packed weight used at rows the table gives to different layouts (AVX-512: the panels at
// 2-8 rows of a W of 512 x 512 and more, oneDNN's from 9), from two threads at once: each product
// right, the second layout made once, from the first.
TEST(GemmPackedF32, OneWeightAtEveryRowCount) {
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{70, 300}, {520, 512}}) {
    const std::vector<float> w = values(n * k, 11);
    const auto packed = pack_weight(Precision::fp32, w.data(), n, k, k);
    const int64_t first = packed_weight_bytes(*packed);
    auto run = [&](int64_t m, std::vector<float>& y) {
      const std::vector<float> x = values(m * k, 12 + m);
      y.assign(static_cast<size_t>(m * n), 0.0f);
      gemm_packed({m, x.data(), k, 0.0f, y.data(), n}, *packed);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const auto [sum, magnitude] = dot(&x[i * k], &w[j * k], k);
          ASSERT_NEAR(y[i * n + j], sum, (k + 3) * 0x1p-24 * magnitude) << "m=" << m << " at " << i << ", " << j;
        }
    };
    const bool both = frozen_weight_kernel(Precision::fp32, 4, n, k) == Kernel::f32_panels &&
                      frozen_weight_kernel(Precision::fp32, 16, n, k) == Kernel::onednn_f32;
    std::vector<float> a, b;
    for (int64_t m : {4, 16}) {  // the second layout made by two threads at once
      std::thread other([&] { run(m, b); });
      run(m, a);
      other.join();
      EXPECT_EQ(a, b) << "m=" << m;
    }
    const int64_t second = packed_weight_bytes(*packed);
    for (int64_t m : {1, 2, 3, 5, 8, 9, 33, 64, 4}) run(m, a);
    if (both) {
      EXPECT_GT(second, first) << "n=" << n << ": the second layout";
    }
    EXPECT_EQ(packed_weight_bytes(*packed), second) << "n=" << n << ": nothing made twice";
  }
}

// linear() in fp32 inference with W frozen: the rows the dispatch table gives to a packed W
// (f32_packed_for: the panels' kPanelRowsMin..kPanelRowsMax on AVX2, 2 and more on AVX-512) make
// it, once; the others use W itself, making nothing; both equal the plain product to float rounding.
TEST(GemmPackedF32, LinearUnderTheInferenceForm) {
  const int64_t in = 300, out = 90;
  Var W(Tensor::from_vector(values(out * in, 7), {out, in}), false);
  Var b(Tensor::from_vector(values(out, 8), {out}), false);
  for (int64_t rows : {int64_t{1}, int64_t{4}, kPanelRowsMin - 1, kPanelRowsMin, int64_t{32}, kPanelRowsMax,
                       kPanelRowsMax + 1, int64_t{64}, int64_t{200}}) {
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
