// Private to src/kernels: gemm_small (include/attn/kernels/gemm_small.h) written once over a lane
// type L (simd_avx2.h, simd_avx512.h), instantiated by avx2/gemm_small.cpp and
// avx512/gemm_small.cpp: tiles of 6 (AVX2) or 8 rows x 2 vectors of C in registers, B^T first copied to
// [k, n] by L::transpose. Masked loads and stores only in a panel narrower than 2 vectors.
#pragma once

#include <algorithm>
#include <cstdint>

#include "attn/kernels/gemm.h"

namespace attn::detail::gemm_small_lanes {

// Rows of C a tile keeps in registers: 2 MR accumulators, 2 vectors of B and A's broadcast fit
// in 16 registers at MR = 6 (AVX2) and in 32 at MR = 8, which also makes 32 rows (a sentence of
// 32 tokens) 4 whole tiles instead of 5 and a tile of 2.
template <typename L>
constexpr int kMR = L::kRegisters == 32 ? 8 : 6;

// C[0:MR, 0:NV vectors] (lanes of m0, m1 unless Full) = alpha sum_p a(r, p) B[p, :] + beta C.
// a(r, p) is A[r * ra + p * pa] (a plain or transposed A); B rows are ldb apart, unit stride.
template <typename L, int MR, int NV, bool Full>
void tile(const float* A, int64_t ra, int64_t pa, const float* B, int64_t ldb, int64_t k, typename L::Mask m0,
          typename L::Mask m1, float alpha, float beta, float* C, int64_t ldc) {
  using V = typename L::V;
  constexpr int W = L::kLanes;
  auto load = [&](const float* p, typename L::Mask m) { return Full ? L::load(p) : L::load_masked(p, m); };
  // Two arrays of registers, every loop over them unrolled: GCC keeps them in registers (with one
  // 2-D array it stored all twelve to the stack at every step of p).
  V c0[MR], c1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) c0[r] = c1[r] = L::zero();
  for (int64_t p = 0; p < k; ++p) {
    const float* b = B + p * ldb;
    const V b0 = load(b, m0);
    const V b1 = NV < 2 ? b0 : load(b + W, m1);
    const float* a = A + p * pa;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const V x = L::set1(a[r * ra]);
      c0[r] = L::fma(x, b0, c0[r]);
      if (NV > 1) c1[r] = L::fma(x, b1, c1[r]);
    }
  }
  const V va = L::set1(alpha), vb = L::set1(beta);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* c = C + r * ldc;
    V y0 = L::mul(va, c0[r]), y1 = L::mul(va, c1[r]);
    if (beta != 0.0f) {
      y0 = L::fma(vb, load(c, m0), y0);
      if (NV > 1) y1 = L::fma(vb, load(c + W, m1), y1);
    }
    if (Full) {
      L::store(c, y0);
      L::store(c + W, y1);
    } else {
      L::store_masked(c, m0, y0);
      if (NV > 1) L::store_masked(c + W, m1, y1);
    }
  }
}

// One column panel (at most 2 vectors wide) over every row of C, kMR rows at a time.
template <typename L, int NV, bool Full>
void panel(const GemmArgs& g, const float* B, int64_t ldb, int64_t cols, int64_t j0) {
  const typename L::Mask m0 = L::mask(cols), m1 = L::mask(cols - L::kLanes);
  const int64_t ra = g.trans_a ? 1 : g.lda, pa = g.trans_a ? g.lda : 1;
  const float* b = B + j0;
  float* c = g.c + j0;
  constexpr int MR = kMR<L>;
  int64_t i = 0;
  for (; i + MR <= g.m; i += MR)
    tile<L, MR, NV, Full>(g.a + i * ra, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c + i * g.ldc, g.ldc);
  const float* a = g.a + i * ra;
  c += i * g.ldc;
  switch (g.m - i) {
    case 7:  // remainders of 6 and 7 rows only when tiles are of 8 (no 14 accumulators for AVX2)
      if constexpr (MR == 8) tile<L, 7, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc);
      break;
    case 6:
      if constexpr (MR == 8) tile<L, 6, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc);
      break;
    case 5: tile<L, 5, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 4: tile<L, 4, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 3: tile<L, 3, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 2: tile<L, 2, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    case 1: tile<L, 1, NV, Full>(a, ra, pa, b, ldb, g.k, m0, m1, g.alpha, g.beta, c, g.ldc); break;
    default: break;
  }
}

// The kernel table's gemm_small: `packed` holds k n floats when g.trans_b.
template <typename L>
void gemm_small(const GemmArgs& g, float* packed) {
  const float* B = g.b;
  int64_t ldb = g.ldb;
  if (g.trans_b) {
    // op(B) = B^T: B is [n, k]; copy it to [k, n] so that a row of op(B) is contiguous.
    L::transpose(g.b, g.ldb, g.n, g.k, packed, g.n);
    B = packed;
    ldb = g.n;
  }
  constexpr int64_t kNR = 2 * L::kLanes;
  for (int64_t j0 = 0; j0 < g.n; j0 += kNR) {
    const int64_t cols = std::min<int64_t>(kNR, g.n - j0);
    if (cols == kNR)
      panel<L, 2, true>(g, B, ldb, cols, j0);
    else if (cols > L::kLanes)
      panel<L, 2, false>(g, B, ldb, cols, j0);
    else
      panel<L, 1, false>(g, B, ldb, cols, j0);
  }
}

}  // namespace attn::detail::gemm_small_lanes
