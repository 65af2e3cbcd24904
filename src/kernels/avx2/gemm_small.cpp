// The AVX2 form of gemm_small (include/attn/kernels/gemm_small.h).
#include <algorithm>

#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {
namespace {

// AVX2: the same tiles at half the width (6 x 16: twelve ymm accumulators), masked loads and
// stores only in a panel narrower than 16 columns; the same order of operations, the same bits.
using avx2::lane_mask8;

constexpr int kMR = 6;
constexpr int kNR = 16;

template <int MR, int NV, bool Full>
void tile(const float* A, int64_t ra, int64_t pa, const float* B, int64_t ldb, int64_t k, __m256i m0, __m256i m1,
          float alpha, float beta, float* C, int64_t ldc) {
  __m256 c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const float* b = B + p * ldb;
    const __m256 b0 = Full ? _mm256_loadu_ps(b) : _mm256_maskload_ps(b, m0);
    const __m256 b1 = NV < 2 ? b0 : Full ? _mm256_loadu_ps(b + 8) : _mm256_maskload_ps(b + 8, m1);
    const float* a = A + p * pa;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * ra);
      c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
      if (NV > 1) c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* c = C + r * ldc;
    __m256 y0 = _mm256_mul_ps(va, c0[r]), y1 = _mm256_mul_ps(va, c1[r]);
    if (beta != 0.0f) {
      y0 = _mm256_fmadd_ps(vb, Full ? _mm256_loadu_ps(c) : _mm256_maskload_ps(c, m0), y0);
      if (NV > 1) y1 = _mm256_fmadd_ps(vb, Full ? _mm256_loadu_ps(c + 8) : _mm256_maskload_ps(c + 8, m1), y1);
    }
    if (Full) {
      _mm256_storeu_ps(c, y0);
      _mm256_storeu_ps(c + 8, y1);
    } else {
      _mm256_maskstore_ps(c, m0, y0);
      if (NV > 1) _mm256_maskstore_ps(c + 8, m1, y1);
    }
  }
}

template <int NV, bool Full>
void panel(const GemmArgs& g, const float* B, int64_t ldb, int64_t cols, int64_t j0) {
  const __m256i m0 = lane_mask8(cols), m1 = lane_mask8(cols - 8);
  const int64_t ra = g.trans_a ? 1 : g.lda, pa = g.trans_a ? g.lda : 1;
  const float* b = B + j0;
  float* c = g.c + j0;
  int64_t i = 0;
  for (; i + kMR <= g.m; i += kMR)
    tile<kMR, NV, Full>(g.a + i * ra, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c + i * g.ldc, g.ldc);
  const float* a = g.a + i * ra;
  c += i * g.ldc;
  switch (g.m - i) {
    case 5: tile<5, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 4: tile<4, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 3: tile<3, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 2: tile<2, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 1: tile<1, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    default: break;
  }
}

void gemm_small_avx2(const GemmArgs& g, float* packed) {
  const float* B = g.b;
  int64_t ldb = g.ldb;
  if (g.trans_b) {
    // op(B) = B^T: B is [n, k]; copy it to [k, n] so that a row of op(B) is contiguous.
    for (int64_t j0 = 0; j0 < g.n; j0 += 8)  // 8 rows of B at a time: 8 write streams
      for (int64_t p = 0; p < g.k; ++p)
        for (int64_t j = j0; j < std::min(g.n, j0 + 8); ++j) packed[p * g.n + j] = g.b[j * g.ldb + p];
    B = packed;
    ldb = g.n;
  }
  for (int64_t j0 = 0; j0 < g.n; j0 += kNR) {
    const int64_t cols = std::min<int64_t>(kNR, g.n - j0);
    if (cols == kNR)
      panel<2, true>(g, B, ldb, cols, j0);
    else if (cols > 8)
      panel<2, false>(g, B, ldb, cols, j0);
    else
      panel<1, false>(g, B, ldb, cols, j0);
  }
}

}  // namespace

template <>
void fill_gemm_small<Isa::avx2>(KernelTable& t) {
  t.gemm_small = gemm_small_avx2;
}

}  // namespace attn::detail
