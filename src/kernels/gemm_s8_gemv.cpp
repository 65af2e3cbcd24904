// The int8 product for few rows by AVX-512 VNNI, or by AVX2 on 7-bit weights
// (include/attn/kernels/gemm_s8_gemv.h): the panel packing and the tiled vpdpbusd (vpmaddubsw)
// kernel (x is quantized by src/kernels/quantize_s8.cpp).
#include "attn/kernels/gemm_s8_gemv.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "lane_mask.h"

namespace attn {

namespace {

constexpr int64_t kPanel = 16;  // columns per panel: one zmm of s32 sums
constexpr int kGroup = 4;       // panels per group: one contiguous stream of 256 bytes a step

int64_t panels_of(int64_t n) { return (n + kPanel - 1) / kPanel; }

// The bytes of W_q[16 p + c, 4 s .. 4 s + 3] start at panel_offset(p, s) + 4 c: group g = p / 4
// holds min(4, panels - 4 g) panels, interleaved step by step.
int64_t panel_offset(int64_t p, int64_t s, int64_t panels, int64_t k4) {
  const int64_t g = p / kGroup, width = std::min<int64_t>(kGroup, panels - g * kGroup);
  return g * kGroup * kPanel * k4 + (s * width + p % kGroup) * 64;
}

// Calls visit(packed byte, j, c) for every W[j, c] (j < n, c < k) in the order of the packed
// layout: one offset computation per 64 bytes.
template <typename Visit>
void for_each_weight(int8_t* data, int64_t n, int64_t k, int64_t k4, Visit visit) {
  const int64_t panels = panels_of(n);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t s = 0; s < k4 / 4; ++s) {
      int8_t* block = data + panel_offset(p, s, panels, k4);
      for (int64_t j = p * kPanel; j < std::min(n, (p + 1) * kPanel); ++j)
        for (int64_t c = 4 * s; c < std::min(k, 4 * s + 4); ++c)
          visit(block[(j % kPanel) * 4 + c % 4], j, c);
    }
}

}  // namespace

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)

namespace {

// Bytes ahead of the weight stream prefetched to L1: ~10% fewer CPU seconds decoding the base
// model (weights from L3/DRAM) than the hardware prefetcher alone.
constexpr int64_t kPrefetch = 2048;
constexpr int kMaxTile = 6;  // x rows per kernel call: 6 x 4 accumulators + 4 weights + 1 x
// Multiply-adds (m n k) from which the column groups are split among threads.
constexpr int64_t kParallelWork = int64_t{1} << 19;

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
    const __mmask16 mask = detail::lane_mask(t.columns - p * kPanel);
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
      detail::store16(y, mask, out);
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

bool s8_gemv_available() { return true; }

#elif defined(__AVX2__) && defined(__FMA__)

// AVX2 without VNNI: vpmaddubsw multiplies u8 by s8 and adds neighbouring pairs in saturating
// s16; with 7-bit weights (int8_weight_max() is 63 on such CPUs) |u0 w0 + u1 w1| <= 2 x 255 x 63
// = 32130 never saturates, and vpmaddwd by ones adds the pairs of pairs into s32: the same exact
// sums as vpdpbusd. A tile takes fewer rows and panels than the AVX-512 one (16 ymm registers).
namespace {

constexpr int64_t kPrefetch = 2048;  // as the AVX-512 kernel
constexpr int kMaxTile = 3;          // x rows per kernel call
constexpr int64_t kParallelWork = int64_t{1} << 19;

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
      const __m256i mask = detail::lane_mask8(left);
      const __m256 sw = detail::load8(t.sw + col, left, mask);
      const __m256i comp = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.comp + col));
      for (int i = 0; i < MB; ++i) {
        const __m256 a = _mm256_cvtepi32_ps(_mm256_sub_epi32(sums[(i * NB + p) * 2 + h], comp));
        const __m256 scale = _mm256_mul_ps(_mm256_set1_ps(t.sx[i]), sw);
        float* y = t.y + i * t.ldy + col;
        // as the AVX-512 kernel and gemm_packed's oneDNN path
        const __m256 out =
            t.bias != nullptr ? _mm256_fmadd_ps(scale, a, detail::load8(t.bias + col, left, mask))
            : t.beta == 0.0f  ? _mm256_mul_ps(scale, a)
                              : _mm256_fmadd_ps(scale, a, _mm256_mul_ps(beta, detail::load8(y, left, mask)));
        detail::store8(y, left, mask, out);
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

// Only where weights are 7-bit (no VNNI: int8_weight_max() is 63); a CPU with AVX-VNNI but no
// AVX-512 keeps 8-bit weights and oneDNN.
bool s8_gemv_available() { return !cpu_has_int8_dot(); }

#else

bool s8_gemv_available() { return false; }

#endif

void S8Panels::Free::operator()(int8_t* p) const { std::free(p); }

S8Panels pack_s8_panels(const int8_t* w, int64_t n, int64_t k) {
  check(n >= 1 && k >= 1, "pack_s8_panels: bad weight n=", n, " k=", k);
  S8Panels out;
  out.n = n;
  out.k = k;
  out.k4 = (k + 3) / 4 * 4;
  const int64_t panels = panels_of(n);
  const size_t bytes = static_cast<size_t>(panels * kPanel * out.k4);
  out.data.reset(static_cast<int8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  check(out.data != nullptr, "pack_s8_panels: out of memory for ", bytes, " bytes");
  std::memset(out.data.get(), 0, bytes);
  out.comp.assign(panels * kPanel, 0);
  for_each_weight(out.data.get(), n, k, out.k4,
                  [&](int8_t& packed, int64_t j, int64_t c) { packed = w[j * k + c]; });
  // comp[j] = 128 sum_k W[j, k]
  for (int64_t j = 0; j < n; ++j) {
    int32_t sum = 0;
    for (int64_t c = 0; c < k; ++c) sum += w[j * k + c];
    out.comp[j] = 128 * sum;
  }
  return out;
}

std::vector<int8_t> unpack_s8_panels(const S8Panels& p) {
  std::vector<int8_t> w(p.n * p.k);
  for_each_weight(p.data.get(), p.n, p.k, p.k4,
                  [&](int8_t& packed, int64_t j, int64_t c) { w[j * p.k + c] = packed; });
  return w;
}

void gemm_s8_gemv(const S8GemvArgs& a, const S8Panels& w) {
#if (defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)) || (defined(__AVX2__) && defined(__FMA__))
  check(s8_gemv_available(), "gemm_s8_gemv: needs VNNI or 7-bit weights");
  check(a.m >= 0 && a.ldxu >= w.k4 && a.ldy >= w.n, "gemm_s8_gemv: bad arguments m=", a.m,
        " ldxu=", a.ldxu, " ldy=", a.ldy, " for weight [", w.n, ", ", w.k, "]");
  const int64_t groups = (panels_of(w.n) + kGroup - 1) / kGroup;
  const bool parallel = a.m * w.n * w.k >= kParallelWork && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t g = 0; g < groups; ++g) run_group(a, w, g);
#else
  fail("gemm_s8_gemv: built without AVX512-VNNI or AVX2");
#endif
}

}  // namespace attn
