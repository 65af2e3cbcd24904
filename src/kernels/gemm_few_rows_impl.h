// Private to src/kernels: gemm_few_rows (include/attn/kernels/gemm_few_rows.h) written once over a
// lane type L (simd_avx2.h, simd_avx512.h), instantiated by avx2/gemm_few_rows.cpp and
// avx512/gemm_few_rows.cpp: tiles of up to 6 rows of A against NR rows of W, dot products in
// vector lanes, then their lane sums (L::sum8); W's rows side by side when they come from L2, one
// after another when from memory (accumulate_stream).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "attn/kernels/gemm.h"

namespace attn::detail::few_rows {

constexpr int kMaxTileRows = 6;
constexpr int64_t kMaxTiles = 64;  // of A's rows: m <= 384
// W rows a tile of MB rows of A takes: MB NR accumulators, NR W vectors and one A vector in the
// registers (one W row at a time for MB = 1, whose W operands stay in memory).
template <typename L>
constexpr int kColsFor[kMaxTileRows] = {8, L::kRegisters == 32 ? 6 : 4, L::kRegisters == 32 ? 5 : 3,
                                        L::kRegisters == 32 ? 4 : 2, L::kRegisters == 32 ? 4 : 2,
                                        L::kRegisters == 32 ? 4 : 2};
// The bytes of A's rows up to which a tile reads W from memory as one stream (accumulate_stream):
// each row of W reads them all again, from L1.
constexpr int64_t kStreamBytesOfA = int64_t{8} << 10;
// W rows of one block: read from memory by the first tile of A's rows, from L2 by the others.
constexpr int64_t kBlockBytes = int64_t{128} << 10;

struct Tile {
  const float* a;  // first row of the tile
  int64_t lda;
  const float* w;  // first W row (column of C) of the tile
  int64_t ldw;
  int64_t k;
  bool prefetch;  // the next NR rows of W to L1 (W from memory, rows side by side)
  bool stream;    // W's rows one after another (W from memory, A's rows in L1)
};

// sums[i NR + j] = lanes of sum_k A[i, k] W[j, k], the NR rows of W side by side (W from L2): one
// load of W feeds MB products and one of A feeds NR. The loops over MB and NR are unrolled before
// register allocation and the lane sums are apart, so that the accumulators stay in registers.
template <typename L, int MB, int NR, bool Prefetch>
[[gnu::noinline]] void accumulate(const Tile& t, typename L::V* sums) {
  using V = typename L::V;
  V acc[MB][NR];
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j] = L::zero();
  int64_t c = 0;
  for (; c + L::kLanes <= t.k; c += L::kLanes) {
    V w[NR];
    #pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) w[j] = L::load(t.w + j * t.ldw + c);
    if (Prefetch && (c & 15) == 0)  // once per 64-byte line of each row
      #pragma GCC unroll 8
      for (int j = 0; j < NR; ++j)
        _mm_prefetch(reinterpret_cast<const char*>(t.w + (NR + j) * t.ldw + c), _MM_HINT_T0);
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      V x = L::load(t.a + i * t.lda + c);
      asm("" : "+v"(x));  // one load of x into a register for the NR products
      #pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) acc[i][j] = L::fma(x, w[j], acc[i][j]);
    }
  }
  if (c < t.k) {  // the last k % lanes columns, zero past k in both operands
    const int64_t left = t.k - c;
    const typename L::Mask m = L::mask(left);
    for (int j = 0; j < NR; ++j) {
      const V w = L::load_masked(t.w + j * t.ldw + c, m);
      for (int i = 0; i < MB; ++i) acc[i][j] = L::fma(L::load_masked(t.a + i * t.lda + c, m), w, acc[i][j]);
    }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) sums[i * NR + j] = acc[i][j];
}

// The same sums with W's rows one after another (W from memory): W is read as one stream, in the
// order it is stored, where NR rows side by side are NR streams. One stream reads 1.15-1.5x as
// many bytes a second (Zen 5, 2 threads, 100 MB of W with k = 512 and 2048): the hardware
// prefetcher follows it. Each sum takes the same multiply-adds in the same order as accumulate's,
// so a row of C has the same bits whatever the tile (and m): a row's chain of dependent
// multiply-adds is not the limit, as the next rows' chains run beside it.
template <typename L, int MB, int NR>
[[gnu::noinline]] void accumulate_stream(const Tile& t, typename L::V* sums) {
  using V = typename L::V;
  for (int j = 0; j < NR; ++j) {
    const float* w = t.w + j * t.ldw;
    V acc[MB];
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) acc[i] = L::zero();
    int64_t c = 0;
    for (; c + L::kLanes <= t.k; c += L::kLanes) {
      const V wv = L::load(w + c);
      #pragma GCC unroll 8
      for (int i = 0; i < MB; ++i) acc[i] = L::fma(L::load(t.a + i * t.lda + c), wv, acc[i]);
    }
    if (c < t.k) {  // the last k % lanes columns, zero past k in both operands
      const typename L::Mask m = L::mask(t.k - c);
      const V wv = L::load_masked(w + c, m);
      for (int i = 0; i < MB; ++i) acc[i] = L::fma(L::load_masked(t.a + i * t.lda + c, m), wv, acc[i]);
    }
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) sums[i * NR + j] = acc[i];
  }
}

// C[i, j] = alpha sum + beta C[i, j] (C not read when beta is 0)
template <typename L, int MB, int NR>
void tile_kernel(const Tile& t, float alpha, float beta, float* c, int64_t ldc) {
  constexpr int kSums = (MB * NR + 7) / 8 * 8;  // whole groups of 8 for the lane sums
  typename L::V sums[kSums];
  for (int i = MB * NR; i < kSums; ++i) sums[i] = L::zero();
  if (t.stream)
    accumulate_stream<L, MB, NR>(t, sums);
  else if (t.prefetch)
    accumulate<L, MB, NR, true>(t, sums);
  else
    accumulate<L, MB, NR, false>(t, sums);
  float total[kSums];
  for (int g = 0; g < kSums; g += 8) L::sum8(sums + g, total + g);
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NR; ++j) {
      float& out = c[i * ldc + j];
      const float s = alpha * total[i * NR + j];
      out = beta == 0.0f ? s : s + beta * out;
    }
}

using TileFn = void (*)(const Tile&, float, float, float*, int64_t);

template <typename L, int MB, int... NR>
constexpr TileFn tile_row_of(int nr, std::integer_sequence<int, NR...>) {
  TileFn fns[] = {tile_kernel<L, MB, NR + 1>...};
  return fns[nr - 1];
}
template <typename L, int MB>
TileFn tile_for(int nr) {
  return tile_row_of<L, MB>(nr, std::make_integer_sequence<int, kColsFor<L>[MB - 1]>{});
}
template <typename L>
TileFn tile_for(int mb, int nr) {
  switch (mb) {
    case 1: return tile_for<L, 1>(nr);
    case 2: return tile_for<L, 2>(nr);
    case 3: return tile_for<L, 3>(nr);
    case 4: return tile_for<L, 4>(nr);
    case 5: return tile_for<L, 5>(nr);
    default: return tile_for<L, 6>(nr);
  }
}

// Columns [j0, j1) of C, a block of W rows at a time: each tile of A's rows (near-equal tiles of
// at most 4) against the block's rows a few at a time; the first tile reads the block from
// memory, the others from L2.
template <typename L>
void run_columns(const GemmArgs& g, int64_t j0, int64_t j1) {
  const int64_t tiles = (g.m + kMaxTileRows - 1) / kMaxTileRows;
  int64_t rows[kMaxTiles];
  for (int64_t t = 0, i0 = 0; t < tiles; ++t) {
    rows[t] = (g.m - i0) / (tiles - t);
    i0 += rows[t];
  }
  const int64_t block = std::max<int64_t>(8, kBlockBytes / (4 * g.k) / 8 * 8);
  for (int64_t b = j0; b < j1; b += block) {
    const int64_t b1 = std::min(j1, b + block);
    for (int64_t t = 0, i0 = 0; t < tiles; i0 += rows[t], ++t) {
      const int mb = static_cast<int>(rows[t]);
      const int cols = kColsFor<L>[mb - 1];
      const bool stream = t == 0 && mb * g.k * 4 <= kStreamBytesOfA;
      for (int64_t j = b; j < b1; j += cols) {
        const int n = static_cast<int>(std::min<int64_t>(cols, b1 - j));
        const Tile tile{g.a + i0 * g.lda, g.lda, g.b + j * g.ldb, g.ldb, g.k, t == 0, stream};
        tile_for<L>(mb, n)(tile, g.alpha, g.beta, g.c + i0 * g.ldc + j, g.ldc);
      }
    }
  }
}

}  // namespace attn::detail::few_rows
