#include "attn/kernels/gemm_small.h"

#include <algorithm>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "gemm_backends.h"
#include "lane_mask.h"

namespace attn {
namespace {

#if defined(__AVX512F__)

using detail::lane_mask;

constexpr int kMR = 6;   // rows of C a tile keeps in registers
constexpr int kNR = 32;  // columns: two vectors of 16

// C[0:MR, 0:NV*16] (lanes masked by m0, m1) = alpha sum_p a(r, p) B[p, :] + beta C. a(r, p) is
// A[r * ra + p * pa] (a plain or transposed A); B rows are ldb apart, unit stride.
template <int MR, int NV>
void tile(const float* A, int64_t ra, int64_t pa, const float* B, int64_t ldb, int64_t k, __mmask16 m0,
          __mmask16 m1, float alpha, float beta, float* C, int64_t ldc) {
  // Two arrays of registers, every loop over them unrolled: GCC keeps them in zmm registers
  // (with one 2-D array it stored all twelve to the stack at every step of p).
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const float* b = B + p * ldb;
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
    const __m512 b1 = NV > 1 ? _mm512_maskz_loadu_ps(m1, b + 16) : b0;
    const float* a = A + p * pa;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * ra]);
      c0[r] = _mm512_fmadd_ps(x, b0, c0[r]);
      if (NV > 1) c1[r] = _mm512_fmadd_ps(x, b1, c1[r]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* c = C + r * ldc;
    __m512 y0 = _mm512_mul_ps(va, c0[r]), y1 = _mm512_mul_ps(va, c1[r]);
    if (beta != 0.0f) {
      y0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, c), y0);
      if (NV > 1) y1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, c + 16), y1);
    }
    detail::store16(c, m0, y0);
    if (NV > 1) detail::store16(c + 16, m1, y1);
  }
}

// One column panel (at most 32 columns) over every row of C, kMR rows at a time.
template <int NV>
void panel(const GemmArgs& g, const float* B, int64_t ldb, int64_t cols, int64_t j0) {
  const __mmask16 m0 = lane_mask(cols), m1 = lane_mask(cols - 16);
  const int64_t ra = g.trans_a ? 1 : g.lda, pa = g.trans_a ? g.lda : 1;
  const float* b = B + j0;
  float* c = g.c + j0;
  int64_t i = 0;
  for (; i + kMR <= g.m; i += kMR)
    tile<kMR, NV>(g.a + i * ra, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c + i * g.ldc, g.ldc);
  const float* a = g.a + i * ra;
  c += i * g.ldc;
  switch (g.m - i) {
    case 5: tile<5, NV>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 4: tile<4, NV>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 3: tile<3, NV>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 2: tile<2, NV>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 1: tile<1, NV>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    default: break;
  }
}

// dst[c * ldd + r] = src[r * lds + c] for r < nr, c < nc (both at most 16): a 16 x 16 transpose in
// registers (rows interleaved in pairs, then pairs of pairs, then 128-bit lanes twice). The maskz
// forms with every lane on: GCC 12 warns about the plain forms' undefined pass-through.
void transpose16(const float* src, int64_t lds, int64_t nr, int64_t nc, float* dst, int64_t ldd) {
  const __mmask16 cm = lane_mask(nc), rm = lane_mask(nr);
  __m512 r[16], t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = i < nr ? _mm512_maskz_loadu_ps(cm, src + i * lds) : _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {  // (r_i c, r_i+1 c) pairs
    t[i] = _mm512_maskz_unpacklo_ps(0xffff, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[i], r[i + 1]);
  }
  auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
#pragma GCC unroll 4
  for (int g = 0; g < 16; g += 4) {  // r[g + q]: columns q, q + 4, q + 8, q + 12 of rows g..g+3
    r[g] = lo(t[g], t[g + 2]);
    r[g + 1] = hi(t[g], t[g + 2]);
    r[g + 2] = lo(t[g + 1], t[g + 3]);
    r[g + 3] = hi(t[g + 1], t[g + 3]);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {  // two groups of four rows side by side
    t[q] = _mm512_maskz_shuffle_f32x4(0xffff, r[q], r[4 + q], 0x88);
    t[q + 4] = _mm512_maskz_shuffle_f32x4(0xffff, r[q], r[4 + q], 0xdd);
    t[q + 8] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + q], r[12 + q], 0x88);
    t[q + 12] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + q], r[12 + q], 0xdd);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {  // column c = q + 4 L of all 16 rows
    r[q] = _mm512_maskz_shuffle_f32x4(0xffff, t[q], t[8 + q], 0x88);
    r[q + 8] = _mm512_maskz_shuffle_f32x4(0xffff, t[q], t[8 + q], 0xdd);
    r[q + 4] = _mm512_maskz_shuffle_f32x4(0xffff, t[q + 4], t[12 + q], 0x88);
    r[q + 12] = _mm512_maskz_shuffle_f32x4(0xffff, t[q + 4], t[12 + q], 0xdd);
  }
  for (int64_t c = 0; c < nc; ++c) detail::store16(dst + c * ldd, rm, r[c]);
}

void gemm_small_avx512(const GemmArgs& g) {
  const float* B = g.b;
  int64_t ldb = g.ldb;
  if (g.trans_b) {
    // op(B) = B^T: B is [n, k]; copy it to [k, n] so that a row of op(B) is contiguous.
    thread_local std::vector<float> packed;
    packed.resize(static_cast<size_t>(g.k * g.n));
    for (int64_t j = 0; j < g.n; j += 16)
      for (int64_t p = 0; p < g.k; p += 16)
        transpose16(g.b + j * g.ldb + p, g.ldb, std::min<int64_t>(16, g.n - j), std::min<int64_t>(16, g.k - p),
                    packed.data() + p * g.n + j, g.n);
    B = packed.data();
    ldb = g.n;
  }
  for (int64_t j0 = 0; j0 < g.n; j0 += kNR) {
    const int64_t cols = std::min<int64_t>(kNR, g.n - j0);
    if (cols > 16)
      panel<2>(g, B, ldb, cols, j0);
    else
      panel<1>(g, B, ldb, cols, j0);
  }
}

#elif defined(__AVX2__) && defined(__FMA__)

// AVX2: the same tiles at half the width (6 x 16: twelve ymm accumulators), masked loads and
// stores only in a panel narrower than 16 columns; the same order of operations, the same bits.
using detail::lane_mask8;

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

void gemm_small_avx2(const GemmArgs& g) {
  const float* B = g.b;
  int64_t ldb = g.ldb;
  if (g.trans_b) {
    // op(B) = B^T: B is [n, k]; copy it to [k, n] so that a row of op(B) is contiguous.
    thread_local std::vector<float> packed;
    packed.resize(static_cast<size_t>(g.k * g.n));
    for (int64_t j0 = 0; j0 < g.n; j0 += 8)  // 8 rows of B at a time: 8 write streams
      for (int64_t p = 0; p < g.k; ++p)
        for (int64_t j = j0; j < std::min(g.n, j0 + 8); ++j) packed[p * g.n + j] = g.b[j * g.ldb + p];
    B = packed.data();
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

#else

void gemm_small_loops(const GemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i) {
    float* c = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < g.k; ++p) {
        const float a = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
        const float b = g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
        sum += a * b;
      }
      c[j] = g.alpha * sum + (g.beta == 0.0f ? 0.0f : g.beta * c[j]);
    }
  }
}

#endif

}  // namespace

void gemm_small(const GemmArgs& g) {
  detail::check_gemm_args(g, "gemm_small");
  if (g.m == 0 || g.n == 0) return;
#if defined(__AVX512F__)
  gemm_small_avx512(g);
#elif defined(__AVX2__) && defined(__FMA__)
  gemm_small_avx2(g);
#else
  gemm_small_loops(g);
#endif
}

}  // namespace attn
