// The AVX2 kernel of the int8 product for few rows on 7-bit weights
// (include/attn/kernels/gemm_s8_gemv.h): vpmaddubsw + vpmaddwd over a group of panels.
#include <algorithm>
#include <cstring>

#include "../gemm_s8_gemv_layout.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {
namespace {

using s8_layout::kGroup;
using s8_layout::kPanel;
using s8_layout::panels_of;

// AVX2 without VNNI: vpmaddubsw multiplies u8 by s8 and adds neighbouring pairs in saturating
// s16; with 7-bit weights (int8_weight_max() is 63 on such CPUs) |u0 w0 + u1 w1| <= 2 x 255 x 63
// = 32130 never saturates, and vpmaddwd by ones adds the pairs of pairs into s32: the same exact
// sums as vpdpbusd. A tile takes fewer rows and panels than the AVX-512 one (16 ymm registers).
constexpr int64_t kPrefetch = 2048;  // as the AVX-512 kernel
constexpr int kMaxTile = 3;          // x rows per kernel call

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

// sums[(i NB + p) 2 + h] lane c = sum_k x[i, k] W[16 p + 8 h + c, k]
template <int MB, int NB>
[[gnu::noinline]] void accumulate(const Tile& t, __m256i* sums) {
  __m256i acc[MB][NB][2];
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p) acc[i][p][0] = acc[i][p][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t s = 0; s < t.steps; ++s) {
    const int8_t* ws = t.w + s * t.stride;
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p) _mm_prefetch(reinterpret_cast<const char*>(ws + p * 64 + kPrefetch), _MM_HINT_T0);
    __m256i b[MB];
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      int32_t x4;
      std::memcpy(&x4, t.x + i * t.ldx + 4 * s, 4);
      b[i] = _mm256_set1_epi32(x4);
    }
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p)
      #pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(ws + p * 64 + h * 32));
        #pragma GCC unroll 8
        for (int i = 0; i < MB; ++i)
          acc[i][p][h] = _mm256_add_epi32(acc[i][p][h], _mm256_madd_epi16(_mm256_maddubs_epi16(b[i], w), ones));
      }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p) {
      _mm256_store_si256(sums + (i * NB + p) * 2, acc[i][p][0]);
      _mm256_store_si256(sums + (i * NB + p) * 2 + 1, acc[i][p][1]);
    }
}

template <int MB, int NB>
void tile_kernel(const Tile& t) {
  alignas(32) __m256i sums[MB * NB * 2];
  accumulate<MB, NB>(t, sums);
  // y = (s_x s_w) (acc - comp) + beta y, 8 columns at a time
  const __m256 beta = _mm256_set1_ps(t.beta);
  for (int p = 0; p < NB; ++p)
    for (int h = 0; h < 2; ++h) {
      const int64_t col = p * kPanel + h * 8;
      if (col >= t.columns) return;
      const int64_t left = t.columns - col;
      const __m256i mask = avx2::lane_mask8(left);
      const __m256 sw = avx2::load8(t.sw + col, left, mask);
      const __m256i comp = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.comp + col));
      for (int i = 0; i < MB; ++i) {
        const __m256 a = _mm256_cvtepi32_ps(_mm256_sub_epi32(sums[(i * NB + p) * 2 + h], comp));
        const __m256 scale = _mm256_mul_ps(_mm256_set1_ps(t.sx[i]), sw);
        float* y = t.y + i * t.ldy + col;
        // as the AVX-512 kernel and gemm_packed's oneDNN path
        const __m256 out =
            t.bias != nullptr ? _mm256_fmadd_ps(scale, a, avx2::load8(t.bias + col, left, mask))
            : t.beta == 0.0f  ? _mm256_mul_ps(scale, a)
                              : _mm256_fmadd_ps(scale, a, _mm256_mul_ps(beta, avx2::load8(y, left, mask)));
        avx2::store8(y, left, mask, out);
      }
    }
}

using TileFn = void (*)(const Tile&);

template <int MB>
constexpr TileFn tile_row[kGroup] = {tile_kernel<MB, 1>, tile_kernel<MB, 2>, tile_kernel<MB, 3>,
                                     tile_kernel<MB, 4>};
constexpr const TileFn* tiles[kMaxTile] = {tile_row<1>, tile_row<2>, tile_row<3>};
// Panels a tile of MB rows takes at once: 2 MB NB accumulators in 16 registers.
constexpr int kPanelsFor[kMaxTile] = {4, 2, 1};

// All rows against group g: the rows in near-equal tiles of at most kMaxTile, each against the
// group's panels a few at a time.
void run_group(const S8GemvArgs& a, const S8Panels& w, int64_t g) {
  const int64_t panels = panels_of(w.n);
  const int width = static_cast<int>(std::min<int64_t>(kGroup, panels - g * kGroup));
  const int64_t j0 = g * kGroup * kPanel;
  const int8_t* group = w.data.get() + g * kGroup * kPanel * w.k4;
  const int64_t ntiles = (a.m + kMaxTile - 1) / kMaxTile;
  for (int64_t tile = 0, i0 = 0; tile < ntiles; ++tile) {
    const int64_t rows = (a.m - i0) / (ntiles - tile);
    const int chunk = kPanelsFor[rows - 1];
    for (int p0 = 0; p0 < width; p0 += chunk) {
      const int nb = std::min(chunk, width - p0);
      const int64_t j = j0 + p0 * kPanel;
      const Tile t{group + p0 * 64, width * 64, w.k4 / 4, a.xu + i0 * a.ldxu, a.ldxu, a.sx + i0, a.sw + j,
                   w.comp.data() + j, w.n - j, a.beta, a.y + i0 * a.ldy + j, a.ldy, a.bias ? a.bias + j : nullptr};
      tiles[rows - 1][nb - 1](t);
    }
    i0 += rows;
  }
}

}  // namespace

template <>
void fill_gemm_s8_gemv<Isa::avx2>(KernelTable& t) {
  t.s8_gemv_group = run_group;
}

}  // namespace attn::detail
