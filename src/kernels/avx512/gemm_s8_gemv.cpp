// The AVX-512 VNNI kernel of the int8 product for few rows (include/attn/kernels/gemm_s8_gemv.h):
// the tiled vpdpbusd over a group of panels. Compiled with -mavx512vnni (CMakeLists.txt); in the
// table of every AVX-512 CPU, used only where cpuid reports VNNI (gemm_s8_gemv.cpp).
#include <cstring>

#include "../gemm_s8_gemv_layout.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {
namespace {

using s8_layout::kGroup;
using s8_layout::kPanel;
using s8_layout::panels_of;

// Bytes ahead of the weight stream prefetched to L1: ~10% fewer CPU seconds decoding the base
// model (weights from L3/DRAM) than the hardware prefetcher alone.
constexpr int64_t kPrefetch = 2048;
constexpr int kMaxTile = 6;  // x rows per kernel call: 6 x 4 accumulators + 4 weights + 1 x
// Multiply-adds (m n k) from which the column groups are split among threads.

// One tile: rows [0, MB) of x against the NB panels of one group, all of k, then the epilogue.
struct Tile {
  const int8_t* w;      // the group's first byte
  int64_t steps;        // k4 / 4
  const uint8_t* x;     // first row of the tile
  int64_t ldx;
  const float* sx;      // [MB]
  const float* sw;      // the group's first column
  const int32_t* comp;  // the group's first column
  int64_t columns;      // columns of y left from the group's first (masks the last panel)
  float beta;
  float* y;  // row 0, the group's first column
  int64_t ldy;
  const float* bias;  // the group's first column, or null
};

// sums[i NB + p] lane c = sum_k x[i, k] W[16 p + c, k] for the MB rows and NB panels of a tile.
// The loops over MB and NB are unrolled before register allocation (#pragma GCC unroll), and the
// epilogue is apart (the sums go through memory once): otherwise GCC keeps the accumulators on
// the stack and reloads them at every step.
template <int MB, int NB>
[[gnu::noinline]] void accumulate(const Tile& t, __m512i* sums) {
  __m512i acc[MB][NB];
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p) acc[i][p] = _mm512_setzero_si512();
  // acc[i][p] lane c += sum_t x[i, 4 s + t] W[16 p + c, 4 s + t]
  for (int64_t s = 0; s < t.steps; ++s) {
    __m512i w[NB];
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p) w[p] = _mm512_load_si512(t.w + (s * NB + p) * 64);
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p)
      _mm_prefetch(reinterpret_cast<const char*>(t.w + (s * NB + p) * 64 + kPrefetch), _MM_HINT_T0);
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      int32_t x4;
      std::memcpy(&x4, t.x + i * t.ldx + 4 * s, 4);
      const __m512i b = _mm512_set1_epi32(x4);
      #pragma GCC unroll 8
      for (int p = 0; p < NB; ++p) acc[i][p] = _mm512_dpbusd_epi32(acc[i][p], b, w[p]);
    }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int p = 0; p < NB; ++p) _mm512_store_si512(sums + i * NB + p, acc[i][p]);
}

template <int MB, int NB>
void tile_kernel(const Tile& t) {
  alignas(64) __m512i sums[MB * NB];
  accumulate<MB, NB>(t, sums);
  // y = (s_x s_w) (acc - comp) + beta y
  const __m512 beta = _mm512_set1_ps(t.beta);
  #pragma GCC unroll 8
  for (int p = 0; p < NB; ++p) {
    const __mmask16 mask = avx512::lane_mask(t.columns - p * kPanel);
    const __m512 sw = _mm512_maskz_loadu_ps(mask, t.sw + p * kPanel);
    const __m512i comp = _mm512_loadu_si512(t.comp + p * kPanel);
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      const __m512 a = _mm512_cvtepi32_ps(_mm512_sub_epi32(sums[i * NB + p], comp));
      const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(t.sx[i]), sw);
      float* y = t.y + i * t.ldy + p * kPanel;
      // beta 0: (s_x s_w) acc, or fma(s_x s_w, acc, bias); else fma(s_x s_w, acc, beta y), as
      // gemm_packed's oneDNN path
      const __m512 out =
          t.bias != nullptr ? _mm512_fmadd_ps(scale, a, _mm512_maskz_loadu_ps(mask, t.bias + p * kPanel))
          : t.beta == 0.0f  ? _mm512_mul_ps(scale, a)
                            : _mm512_fmadd_ps(scale, a, _mm512_mul_ps(beta, _mm512_maskz_loadu_ps(mask, y)));
      avx512::store16(y, mask, out);
    }
  }
}

using TileFn = void (*)(const Tile&);

template <int MB>
constexpr TileFn tile_row[kGroup] = {tile_kernel<MB, 1>, tile_kernel<MB, 2>, tile_kernel<MB, 3>,
                                     tile_kernel<MB, 4>};
constexpr const TileFn* tiles[kMaxTile] = {tile_row<1>, tile_row<2>, tile_row<3>,
                                           tile_row<4>, tile_row<5>, tile_row<6>};

// All rows against group g: the rows in near-equal tiles of at most kMaxTile.
void run_group(const S8GemvArgs& a, const S8Panels& w, int64_t g) {
  const int64_t panels = panels_of(w.n);
  const int width = static_cast<int>(std::min<int64_t>(kGroup, panels - g * kGroup));
  const int64_t j0 = g * kGroup * kPanel;
  const int64_t ntiles = (a.m + kMaxTile - 1) / kMaxTile;
  for (int64_t tile = 0, i0 = 0; tile < ntiles; ++tile) {
    const int64_t rows = (a.m - i0) / (ntiles - tile);
    const Tile t{w.data.get() + g * kGroup * kPanel * w.k4, w.k4 / 4, a.xu + i0 * a.ldxu, a.ldxu,
                 a.sx + i0, a.sw + j0, w.comp.data() + j0, w.n - j0, a.beta, a.y + i0 * a.ldy + j0, a.ldy,
                 a.bias ? a.bias + j0 : nullptr};
    tiles[rows - 1][width - 1](t);
    i0 += rows;
  }
}

}  // namespace

template <>
void fill_gemm_s8_gemv<Isa::avx512>(KernelTable& t) {
  t.s8_gemv_group = run_group;
}

}  // namespace attn::detail
