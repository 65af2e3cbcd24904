// The AVX-512 form of gemm_small (include/attn/kernels/gemm_small.h): 6 x 32 tiles of C in
// registers, B^T transposed 16 x 16 in registers.
#include <algorithm>

#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {
namespace {

using avx512::lane_mask;
using avx512::store16;

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
    store16(c, m0, y0);
    if (NV > 1) store16(c + 16, m1, y1);
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
  for (int64_t c = 0; c < nc; ++c) store16(dst + c * ldd, rm, r[c]);
}

void gemm_small_avx512(const GemmArgs& g, float* packed) {
  const float* B = g.b;
  int64_t ldb = g.ldb;
  if (g.trans_b) {
    // op(B) = B^T: B is [n, k]; copy it to [k, n] so that a row of op(B) is contiguous.
    for (int64_t j = 0; j < g.n; j += 16)
      for (int64_t p = 0; p < g.k; p += 16)
        transpose16(g.b + j * g.ldb + p, g.ldb, std::min<int64_t>(16, g.n - j), std::min<int64_t>(16, g.k - p),
                    packed + p * g.n + j, g.n);
    B = packed;
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

}  // namespace

template <>
void fill_gemm_small<Isa::avx512>(KernelTable& t) {
  t.gemm_small = gemm_small_avx512;
}

}  // namespace attn::detail
