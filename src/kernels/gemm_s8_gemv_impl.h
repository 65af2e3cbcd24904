// Private to src/kernels: the int8 product for few rows (include/attn/kernels/gemm_s8_gemv.h)
// written once over a lane type L (simd_avx2.h, simd_avx512.h), instantiated by
// avx2/gemm_s8_gemv.cpp and avx512/gemm_s8_gemv.cpp: the rows of x in tiles against the panels of
// one column group, L::dot_u8s8 (vpdpbusd with VNNI, vpmaddubsw + vpmaddwd on 7-bit weights
// without) over all of k, then y = (s_x s_w) (sum - comp) + beta y.
#pragma once

#include <xmmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "attn/kernels/gemm_s8_gemv.h"
#include "gemm_s8_gemv_layout.h"

namespace attn::detail::s8_lanes {

using s8_layout::kGroup;
using s8_layout::kPanel;
using s8_layout::panels_of;

// Bytes ahead of the weight stream prefetched to L1: ~10% fewer CPU seconds decoding the base
// model (weights from L3/DRAM) than the hardware prefetcher alone (measured with AVX-512).
constexpr int64_t kPrefetch = 2048;

// Vectors of one panel's 16 s32 sums; x rows a tile takes (with 32 registers: 6 rows x 4 panels
// of accumulators, the weights and x; with 16, 3 rows).
template <typename L>
constexpr int kVectors = kPanel / L::kLanes;
template <typename L>
constexpr int kMaxTile = L::kRegisters == 32 ? 6 : 3;
// Panels a tile of `rows` rows takes at once: the whole group with 32 registers; with 16, at most
// 8 accumulators (rows x panels x kVectors).
template <typename L>
constexpr int panels_at_once(int rows) {
  return L::kRegisters == 32 ? kGroup : std::min(kGroup, 8 / (rows * kVectors<L>));
}

// One tile: rows [0, MB) of x against NB consecutive panels of one group, all of k.
struct Tile {
  const int8_t* w;      // the first panel's first 64 bytes
  int64_t stride;       // bytes from one step to the next: 64 x the group's width
  int64_t steps;        // k4 / 4
  const uint8_t* x;     // first row of the tile
  int64_t ldx;
  const float* sx;      // [MB]
  const float* sw;      // the first panel's first column
  const int32_t* comp;  // the first panel's first column
  int64_t columns;      // columns of y left from the first panel's first
  float beta;
  float* y;  // row 0, the first panel's first column
  int64_t ldy;
  const float* bias;  // the first panel's first column, or null
};

// sums[(i NB + p) kVectors + h] lane c = sum_k x[i, k] W[16 p + L::kLanes h + c, k]. The loops
// are unrolled before register allocation and the epilogue is apart (the sums go through memory
// once): otherwise GCC keeps the accumulators on the stack and reloads them at every step.
template <typename L, int MB, int NB>
[[gnu::noinline]] void accumulate(const Tile& t, typename L::I* sums) {
  constexpr int NV = kVectors<L>;
  typename L::I acc[MB][NB][NV];
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p)
      #pragma GCC unroll 2
      for (int h = 0; h < NV; ++h) acc[i][p][h] = L::izero();
  for (int64_t s = 0; s < t.steps; ++s) {
    const int8_t* ws = t.w + s * t.stride;
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p) _mm_prefetch(reinterpret_cast<const char*>(ws + p * 64 + kPrefetch), _MM_HINT_T0);
    typename L::I b[MB];  // x[i, 4 s .. 4 s + 3] in every lane
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      uint32_t x4;
      std::memcpy(&x4, t.x + i * t.ldx + 4 * s, 4);
      b[i] = L::iset1(x4);
    }
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p)
      #pragma GCC unroll 2
      for (int h = 0; h < NV; ++h) {
        const typename L::I w = L::iload_aligned(ws + p * 64 + h * (64 / NV));
        #pragma GCC unroll 8
        for (int i = 0; i < MB; ++i) acc[i][p][h] = L::dot_u8s8(acc[i][p][h], b[i], w);
      }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p)
      #pragma GCC unroll 2
      for (int h = 0; h < NV; ++h) L::istore_aligned(sums + (i * NB + p) * NV + h, acc[i][p][h]);
}

template <typename L, int MB, int NB>
void tile_kernel(const Tile& t) {
  constexpr int NV = kVectors<L>;
  alignas(64) typename L::I sums[MB * NB * NV];
  accumulate<L, MB, NB>(t, sums);
  // y = (s_x s_w) (acc - comp) + beta y, a vector of columns at a time
  const typename L::V beta = L::set1(t.beta);
  for (int p = 0; p < NB; ++p)
    for (int h = 0; h < NV; ++h) {
      const int64_t col = p * kPanel + h * L::kLanes;
      if (col >= t.columns) return;
      const int64_t left = t.columns - col;
      const typename L::Mask mask = L::mask(left);
      const typename L::V sw = L::load(t.sw + col, left, mask);
      const typename L::I comp = L::iload(t.comp + col);
      for (int i = 0; i < MB; ++i) {
        const typename L::V a = L::to_float(L::isub(sums[(i * NB + p) * NV + h], comp));
        const typename L::V scale = L::mul(L::set1(t.sx[i]), sw);
        float* y = t.y + i * t.ldy + col;
        // beta 0: (s_x s_w) acc, or fma(s_x s_w, acc, bias); else fma(s_x s_w, acc, beta y), as
        // gemm_packed's oneDNN path
        const typename L::V out = t.bias != nullptr ? L::fma(scale, a, L::load(t.bias + col, left, mask))
                                  : t.beta == 0.0f  ? L::mul(scale, a)
                                                    : L::fma(scale, a, L::mul(beta, L::load(y, left, mask)));
        L::store(y, left, mask, out);
      }
    }
}

using TileFn = void (*)(const Tile&);

template <typename L, int MB>
constexpr TileFn tile_row[kGroup] = {tile_kernel<L, MB, 1>, tile_kernel<L, MB, 2>, tile_kernel<L, MB, 3>,
                                     tile_kernel<L, MB, 4>};
template <typename L>
TileFn tile_for(int rows, int panels) {
  switch (rows) {
    case 1: return tile_row<L, 1>[panels - 1];
    case 2: return tile_row<L, 2>[panels - 1];
    case 3: return tile_row<L, 3>[panels - 1];
    case 4: return tile_row<L, (kMaxTile<L> < 4 ? 1 : 4)>[panels - 1];
    case 5: return tile_row<L, (kMaxTile<L> < 5 ? 1 : 5)>[panels - 1];
    default: return tile_row<L, (kMaxTile<L> < 6 ? 1 : 6)>[panels - 1];
  }
}

// The kernel table's s8_gemv_group: all rows against group g, the rows in near-equal tiles of at
// most kMaxTile, each against the group's panels panels_at_once at a time.
template <typename L>
void run_group(const S8GemvArgs& a, const S8Panels& w, int64_t g) {
  const int64_t panels = panels_of(w.n);
  const int width = static_cast<int>(std::min<int64_t>(kGroup, panels - g * kGroup));
  const int64_t j0 = g * kGroup * kPanel;
  const int8_t* group = w.data.get() + g * kGroup * kPanel * w.k4;
  const int64_t ntiles = (a.m + kMaxTile<L> - 1) / kMaxTile<L>;
  for (int64_t tile = 0, i0 = 0; tile < ntiles; ++tile) {
    const int rows = static_cast<int>((a.m - i0) / (ntiles - tile));
    const int chunk = panels_at_once<L>(rows);
    for (int p0 = 0; p0 < width; p0 += chunk) {
      const int nb = std::min(chunk, width - p0);
      const int64_t j = j0 + p0 * kPanel;
      const Tile t{group + p0 * 64, width * 64, w.k4 / 4, a.xu + i0 * a.ldxu, a.ldxu, a.sx + i0, a.sw + j,
                   w.comp.data() + j, w.n - j, a.beta, a.y + i0 * a.ldy + j, a.ldy, a.bias ? a.bias + j : nullptr};
      tile_for<L>(rows, nb)(t);
    }
    i0 += rows;
  }
}

}  // namespace attn::detail::s8_lanes
