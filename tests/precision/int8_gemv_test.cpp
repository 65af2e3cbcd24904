// The int8 product for few rows (VNNI kernel, include/attn/kernels/gemm_s8_gemv.h): the
// quantizers against their scalar definition, the kernel against a scalar reference (exact s32
// sums, the documented f32 epilogue) and against gemm_packed's oneDNN path, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_s8_gemv.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

std::vector<float> random_values(int64_t count, uint64_t seed, float scale = 1.0f) {
  Tensor t = Tensor::empty({count});
  Rng rng(seed);
  fill_normal(t, 0.0f, scale, rng);
  return t.to_vector();
}

// max|x| / qmax rounded up to 17 significant bits, written with frexp/ldexp (the kernels use the
// float's bits).
float reference_scale(float amax, int qmax) {
  if (!(amax > 0.0f)) return 1.0f;
  int e = 0;
  const double m = std::frexp(static_cast<double>(amax / static_cast<float>(qmax)), &e);  // [0.5, 1)
  return static_cast<float>(std::ldexp(std::ceil(std::ldexp(m, 17)), e - 17));
}

// The scalar definition: scale = reference_scale(max|x|, qmax), q = round_half_even(x / scale).
float reference_quantize(const float* x, int64_t cols, int8_t* q, int qmax = 127) {
  float amax = 0.0f;
  for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(x[c]));
  const float scale = reference_scale(amax, qmax);
  const float inv = 1.0f / scale;
  for (int64_t c = 0; c < cols; ++c) q[c] = static_cast<int8_t>(std::nearbyint(x[c] * inv));
  return scale;
}

// y[i, j] = fma(s_x[i] s_w[j], acc[i, j], beta y[i, j]) (beta 0: (s_x s_w) acc), acc exact.
void reference_gemm(int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx, const float* w,
                    float beta, float* y, int64_t ldy) {
  std::vector<int8_t> qx(m * k), qw(n * k);
  std::vector<float> sx(m), sw(n);
  for (int64_t i = 0; i < m; ++i) sx[i] = reference_quantize(x + i * ldx, k, qx.data() + i * k);
  for (int64_t j = 0; j < n; ++j) sw[j] = reference_quantize(w + j * k, k, qw.data() + j * k, int8_weight_max());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t acc = 0;
      for (int64_t c = 0; c < k; ++c) acc += int32_t{qx[i * k + c]} * qw[j * k + c];
      float& out = y[i * ldy + j];
      const float a = static_cast<float>(acc);
      out = beta == 0.0f ? (sx[i] * sw[j]) * a : std::fma(sx[i] * sw[j], a, beta * out);
    }
}

// A row stored as (q, scale) and widened back to q x scale quantizes again to the same q and scale
// (attn convert's int8 files rely on it), for both weight ranges and rows of any magnitude.
TEST(Int8Quantize, WidenedRowsQuantizeBackToThemselves) {
  const int64_t rows = 200, cols = 67;
  for (int qmax : {127, 63}) {
    std::vector<float> x = random_values(rows * cols, 7, 1.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) x[r * cols + c] *= std::ldexp(1.0f, static_cast<int>(r % 40) - 20);
    std::vector<int8_t> q(rows * cols), q2(rows * cols);
    std::vector<float> s(rows), s2(rows), widened(rows * cols);
    quantize_rows_s8(x.data(), rows, cols, cols, q.data(), s.data(), qmax);
    for (int64_t i = 0; i < rows * cols; ++i) widened[i] = static_cast<float>(q[i]) * s[i / cols];
    quantize_rows_s8(widened.data(), rows, cols, cols, q2.data(), s2.data(), qmax);
    EXPECT_EQ(s, s2) << "qmax " << qmax;
    EXPECT_EQ(q, q2) << "qmax " << qmax;
  }
}

TEST(Int8Quantize, RowsMatchTheScalarDefinition) {
  const int64_t rows = 4, cols = 37, ld = 41;
  std::vector<float> x = random_values(rows * ld, 1, 3.0f);
  for (int64_t c = 0; c < ld; ++c) x[2 * ld + c] = 0.0f;  // an all-zero row: scale 1
  x[1 * ld + 5] = 2.5f * 127.0f;                           // a row whose max gives q = 127 exactly
  std::vector<int8_t> q(rows * cols), want(rows * cols);
  std::vector<float> scales(rows);
  quantize_rows_s8(x.data(), rows, cols, ld, q.data(), scales.data());
  const int64_t ldu = 40;
  std::vector<uint8_t> u(rows * ldu, 0);
  std::vector<float> uscales(rows);
  quantize_rows_u8(x.data(), rows, cols, ld, u.data(), ldu, uscales.data());
  for (int64_t r = 0; r < rows; ++r) {
    const float s = reference_quantize(x.data() + r * ld, cols, want.data() + r * cols);
    EXPECT_EQ(scales[r], s);
    EXPECT_EQ(uscales[r], s);
    for (int64_t c = 0; c < cols; ++c) {
      EXPECT_EQ(q[r * cols + c], want[r * cols + c]) << r << "," << c;
      EXPECT_EQ(int{u[r * ldu + c]}, int{want[r * cols + c]} + 128) << r << "," << c;
    }
    for (int64_t c = cols; c < ldu; ++c) EXPECT_EQ(u[r * ldu + c], 128);
  }
  EXPECT_EQ(scales[2], 1.0f);
  EXPECT_EQ(q[1 * cols + 5], 127);
  // 7-bit weights (CPUs without VNNI): the same definition with 63
  quantize_rows_s8(x.data(), rows, cols, ld, q.data(), scales.data(), 63);
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_EQ(scales[r], reference_quantize(x.data() + r * ld, cols, want.data() + r * cols, 63));
    for (int64_t c = 0; c < cols; ++c) EXPECT_EQ(q[r * cols + c], want[r * cols + c]) << r << "," << c;
  }
  EXPECT_EQ(q[1 * cols + 5], 63);
}

struct Shape3 {
  int64_t m, n, k;
};

// The VNNI kernel through gemm_packed: y for beta 0 and 1 with row strides past the shape,
// equal to the reference bit for bit; the gap between rows of y is not written.
void check_against_reference(const Shape3& s, uint64_t seed) {
  const int64_t ldx = s.k + 3, ldy = s.n + 5;
  std::vector<float> x = random_values(s.m * ldx, seed, 2.0f), w = random_values(s.n * s.k, seed + 1, 0.1f);
  auto packed = pack_weight(Precision::int8, w.data(), s.n, s.k, s.k);
  for (float beta : {0.0f, 1.0f}) {
    std::vector<float> y0 = random_values(s.m * ldy, seed + 2);
    std::vector<float> got = y0, want = y0;
    gemm_packed({s.m, x.data(), ldx, beta, got.data(), ldy, Kernel::s8_rows}, *packed);
    reference_gemm(s.m, s.n, s.k, x.data(), ldx, w.data(), beta, want.data(), ldy);
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < ldy; ++j)
        ASSERT_EQ(got[i * ldy + j], want[i * ldy + j])
            << "m=" << s.m << " n=" << s.n << " k=" << s.k << " beta=" << beta << " at " << i << "," << j;
  }
}

TEST(Int8Gemv, MatchesScalarReference) {
  if (!s8_gemv_available()) GTEST_SKIP() << "no int8 kernel for few rows here (AVX512-VNNI, or AVX2 with 7-bit weights)";
  // k not a multiple of 4 or 64, n not a multiple of 16 or 64, m across the row tiles (6)
  const Shape3 shapes[] = {{1, 1, 1},    {1, 17, 5},   {3, 100, 67},  {16, 64, 64},  {7, 200, 130},
                           {6, 48, 3},   {13, 33, 258}, {1, 515, 512}, {16, 512, 512}, {2, 2048, 77}, {37, 100, 131}};
  uint64_t seed = 10;
  for (const Shape3& s : shapes) check_against_reference(s, seed += 3);
}

TEST(Int8Gemv, ExtremeValuesDoNotOverflow) {
  if (!s8_gemv_available()) GTEST_SKIP() << "no int8 kernel for few rows here (AVX512-VNNI, or AVX2 with 7-bit weights)";
  // every |q| at its largest (x: 127, W: int8_weight_max()): |acc| = k 127 qmax and the u8
  // operand reaches 255 and 1; with 7-bit weights (AVX2) each s16 pair sum reaches 2 x 255 x 63
  const int64_t m = 2, n = 20, k = 4099;
  std::vector<float> x(m * k), w(n * k);
  for (int64_t c = 0; c < k; ++c) x[c] = 1.0f, x[k + c] = -1.0f;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t c = 0; c < k; ++c) w[j * k + c] = ((j + c) % 3 == 0) ? -0.5f : 0.5f;
  auto packed = pack_weight(Precision::int8, w.data(), n, k, k);
  std::vector<float> got(m * n), want(m * n);
  gemm_packed({m, x.data(), k, 0.0f, got.data(), n, Kernel::s8_rows}, *packed);
  reference_gemm(m, n, k, x.data(), k, w.data(), 0.0f, want.data(), n);
  for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(got[i], want[i]) << i;
  // row 0 column 0: (1/127 * 0.5/qmax) * 127 qmax (k/3 rounded: a third of the weights negative)
  int64_t negative = 0;
  for (int64_t c = 0; c < k; ++c) negative += c % 3 == 0;
  EXPECT_NEAR(got[0], 0.5 * (k - 2 * negative), 1e-3 * k);
}

TEST(Int8Gemv, SameBitsAsOneDnn) {
  if (!s8_gemv_available()) GTEST_SKIP() << "no int8 kernel for few rows here (AVX512-VNNI, or AVX2 with 7-bit weights)";
  const int64_t n = 300, k = 515, ldx = 520, ldy = 301;
  std::vector<float> w = random_values(n * k, 7, 0.05f);
  auto packed = pack_weight(Precision::int8, w.data(), n, k, k);
  for (int64_t m : {1, 3, 8, 16, 20}) {
    std::vector<float> x = random_values(m * ldx, 100 + m);
    for (float beta : {0.0f, 1.0f}) {
      std::vector<float> a = random_values(m * ldy, 200 + m), b = a;
      gemm_packed({m, x.data(), ldx, beta, a.data(), ldy, Kernel::s8_rows}, *packed);
      gemm_packed({m, x.data(), ldx, beta, b.data(), ldy, Kernel::onednn_s8}, *packed);
      for (int64_t i = 0; i < m * ldy; ++i)
        ASSERT_EQ(a[i], b[i]) << "m=" << m << " beta=" << beta << " at " << i;
    }
  }
}

TEST(Int8Gemv, PaddedRowCounts) {
  EXPECT_EQ(s8_padded_rows(1), 16);
  EXPECT_EQ(s8_padded_rows(16), 16);
  EXPECT_EQ(s8_padded_rows(17), 32);
  EXPECT_EQ(s8_padded_rows(256), 256);
  EXPECT_EQ(s8_padded_rows(257), 320);
  EXPECT_EQ(s8_padded_rows(928), 960);
  EXPECT_EQ(s8_padded_rows(960), 960);
}

// Past kOnednnNarrowRows a product whose s32 sums pass kS8AccBlockBytes runs a block of rows at a
// time, each a multiple of 64 rows.
TEST(Int8Gemv, RowBlocks) {
  EXPECT_EQ(s8_row_block(32, 8000), 32);    // a decoding step: one product
  EXPECT_EQ(s8_row_block(256, 8000), 256);
  EXPECT_EQ(s8_row_block(960, 512), 512);   // 512 rows x 512 x 4 bytes = 1 MB
  EXPECT_EQ(s8_row_block(960, 2048), 128);
  EXPECT_EQ(s8_row_block(960, 1536), 128);
  EXPECT_EQ(s8_row_block(320, 8000), 64);   // never below 64
  EXPECT_EQ(s8_row_block(320, 64), 320);    // never above the rows
  for (int64_t n : {100, 512, 1000, 1536, 2048, 5000}) EXPECT_EQ(s8_row_block(960, n) % kOnednnRowBlock, 0) << n;
}

// Past kOnednnNarrowRows the oneDNN product runs on rows padded to a multiple of 64: the real rows
// match the reference exactly, and nothing past n in a row of y is written. n = 2100 runs the
// rows in blocks of 64 (s8_row_block), with beta 0 and 1.
TEST(Int8Gemv, OneDnnOnPaddedRowsMatchesReference) {
  for (int64_t n : {70, 2100}) {
    const int64_t k = n > 1000 ? 40 : 96, ldy = n + 5;
    std::vector<float> w = random_values(n * k, 17, 0.05f);
    auto packed = pack_weight(Precision::int8, w.data(), n, k, k);
    for (int64_t m : {257, 300})
      for (float beta : {0.0f, 1.0f}) {
        if (n == 70 && beta != 0.0f) continue;
        std::vector<float> x = random_values(m * k, 300 + m);
        std::vector<float> got = random_values(m * ldy, 7), want = got;
        gemm_packed({m, x.data(), k, beta, got.data(), ldy, Kernel::onednn_s8}, *packed);
        reference_gemm(m, n, k, x.data(), k, w.data(), beta, want.data(), ldy);
        for (int64_t i = 0; i < m * ldy; ++i)
          ASSERT_EQ(got[i], want[i]) << "n=" << n << " m=" << m << " beta=" << beta << " at " << i;
      }
  }
}

// A bias taken into the epilogue gives the bits of a y that holds the bias, with beta 1: both
// int8 kernels, at decoding and encoding row counts, and bf16 (which copies it into y).
TEST(Int8Gemv, BiasInTheEpilogueEqualsBiasInY) {
  const int64_t n = 70, k = 96, ldy = 75;
  std::vector<float> w = random_values(n * k, 27, 0.05f), bias = random_values(n, 28);
  for (Precision p : {Precision::int8, Precision::bf16}) {
    auto packed = pack_weight(p, w.data(), n, k, k);
    for (Kernel kernel : {Kernel::onednn_s8, Kernel::s8_rows}) {
      if (kernel == Kernel::s8_rows && (p != Precision::int8 || !s8_gemv_available())) continue;
      for (int64_t m : {1, 5, 20, 300}) {
        std::vector<float> x = random_values(m * k, 400 + m);
        std::vector<float> fused(m * ldy, -7.0f), in_y(m * ldy, -7.0f);
        for (int64_t r = 0; r < m; ++r) std::copy(bias.begin(), bias.end(), in_y.begin() + r * ldy);
        PackedGemmArgs g{m, x.data(), k, 0.0f, fused.data(), ldy, kernel};
        g.bias = bias.data();
        gemm_packed(g, *packed);
        gemm_packed({m, x.data(), k, 1.0f, in_y.data(), ldy, kernel}, *packed);
        for (int64_t i = 0; i < m * ldy; ++i)
          ASSERT_EQ(fused[i], in_y[i]) << precision_name(p) << " m=" << m << " kernel " << static_cast<int>(kernel)
                                       << " at " << i;
      }
    }
    std::vector<float> y(n);
    PackedGemmArgs bad{1, w.data(), k, 1.0f, y.data(), n};
    bad.bias = bias.data();
    EXPECT_THROW(gemm_packed(bad, *packed), Error);
  }
}

TEST(Int8Gemv, PanelsUnpackToTheWeight) {
  const int64_t n = 37, k = 70;  // a partial group (3 panels) and k not a multiple of 4
  std::vector<int8_t> w(n * k);
  for (int64_t i = 0; i < n * k; ++i) w[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  const S8Panels p = pack_s8_panels(w.data(), n, k);
  EXPECT_EQ(p.k4, 72);
  EXPECT_EQ(unpack_s8_panels(p), w);
  // comp[j] = 128 sum_k W[j, k]; 0 in the padding columns
  int32_t sum = 0;
  for (int64_t c = 0; c < k; ++c) sum += w[5 * k + c];
  EXPECT_EQ(p.comp[5], 128 * sum);
  ASSERT_EQ(p.comp.size(), 48u);
  EXPECT_EQ(p.comp[40], 0);
}

// With VNNI: the kernel for few rows, oneDNN past them; on AVX2 without VNNI the kernel for all.
TEST(Int8Gemv, AutomaticUsesTheKernelForFewRows) {
  std::vector<float> w = random_values(64 * 32, 3);
  auto packed = pack_weight(Precision::int8, w.data(), 64, 32, 32);
  PackedGemmArgs g;
  g.m = 1;
  EXPECT_EQ(uses_s8_gemv(g, *packed), s8_gemv_available());
  g.m = kS8GemvMaxRows + 1;
  EXPECT_EQ(uses_s8_gemv(g, *packed), s8_gemv_available() && !cpu_has_int8_dot());
  g.m = 1;
  g.kernel = Kernel::onednn_s8;
  EXPECT_FALSE(uses_s8_gemv(g, *packed));
  auto bf16 = pack_weight(Precision::bf16, w.data(), 64, 32, 32);
  g.kernel = std::nullopt;
  EXPECT_FALSE(uses_s8_gemv(g, *bf16));
}

}  // namespace
}  // namespace attn
