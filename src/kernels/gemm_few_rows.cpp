// x W^T for a few rows of x, reading W in place (include/attn/kernels/gemm_few_rows.h): tiles
// of up to 6 rows of A against NR rows of W, dot products in vector lanes, then their lane sums.
#include "attn/kernels/gemm_few_rows.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <utility>

#include "attn/error.h"
#include "gemm_backends.h"
#include "lane_mask.h"

namespace attn {

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))

namespace {

// out[i] = the sum of the 8 lanes of v[i], i < 8, by a tree of horizontal adds:
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) for every vector.
inline void sum8_256(const __m256* v, float* out) {
  const __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);  // halves' sums of v0-3, v4-7
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
}

// The vector of this build: 16 floats (AVX-512) or 8 (AVX2).
#if defined(__AVX512F__)
struct Lanes {
  using V = __m512;
  static constexpr int64_t n = 16;
  static constexpr int kRegisters = 32;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load_part(const float* p, int64_t left) { return _mm512_maskz_loadu_ps(detail::lane_mask(left), p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // out[i] = the sum of v[i]'s lanes, i < 8: the two halves added, then as AVX2 does
  static void sum8(const V* v, float* out) {
    __m256 h[8];
    for (int i = 0; i < 8; ++i)
      h[i] = _mm256_add_ps(_mm512_castps512_ps256(v[i]),
                           _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v[i]), 1)));
    sum8_256(h, out);
  }
};
#else
struct Lanes {
  using V = __m256;
  static constexpr int64_t n = 8;
  static constexpr int kRegisters = 16;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load_part(const float* p, int64_t left) { return _mm256_maskload_ps(p, detail::lane_mask8(left)); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static void sum8(const V* v, float* out) { sum8_256(v, out); }
};
#endif
using V = Lanes::V;

constexpr int kMaxTileRows = 6;
constexpr int64_t kMaxTiles = 64;  // of A's rows: m <= 384
// W rows a tile of MB rows of A takes: MB NR accumulators, NR W vectors and one A vector in the
// registers (one W row at a time for MB = 1, whose W operands stay in memory).
constexpr int kColsFor[kMaxTileRows] = {8, Lanes::kRegisters == 32 ? 6 : 4, Lanes::kRegisters == 32 ? 5 : 3,
                                        Lanes::kRegisters == 32 ? 4 : 2, Lanes::kRegisters == 32 ? 4 : 2,
                                        Lanes::kRegisters == 32 ? 4 : 2};
// W rows of one block: read from memory by the first tile of A's rows, from L2 by the others.
constexpr int64_t kBlockBytes = int64_t{128} << 10;
// Multiply-adds (m n k) from which the columns are split among threads.
constexpr int64_t kParallelWork = int64_t{1} << 16;

struct Tile {
  const float* a;  // first row of the tile
  int64_t lda;
  const float* w;  // first W row (column of C) of the tile
  int64_t ldw;
  int64_t k;
  bool prefetch;  // the next NR rows of W to L1 (when W comes from memory)
};

// sums[i NR + j] = lanes of sum_k A[i, k] W[j, k]. The loops over MB and NR are unrolled before
// register allocation and the lane sums are apart, so that the accumulators stay in registers.
template <int MB, int NR, bool Prefetch>
[[gnu::noinline]] void accumulate(const Tile& t, V* sums) {
  V acc[MB][NR];
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j] = Lanes::zero();
  int64_t c = 0;
  for (; c + Lanes::n <= t.k; c += Lanes::n) {
    V w[NR];
    #pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) w[j] = Lanes::load(t.w + j * t.ldw + c);
    if (Prefetch && (c & 15) == 0)  // once per 64-byte line of each row
      #pragma GCC unroll 8
      for (int j = 0; j < NR; ++j)
        _mm_prefetch(reinterpret_cast<const char*>(t.w + (NR + j) * t.ldw + c), _MM_HINT_T0);
    #pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      V x = Lanes::load(t.a + i * t.lda + c);
      asm("" : "+v"(x));  // one load of x into a register for the NR products
      #pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) acc[i][j] = Lanes::fma(x, w[j], acc[i][j]);
    }
  }
  if (c < t.k) {  // the last k % lanes columns, zero past k in both operands
    const int64_t left = t.k - c;
    for (int j = 0; j < NR; ++j) {
      const V w = Lanes::load_part(t.w + j * t.ldw + c, left);
      for (int i = 0; i < MB; ++i) acc[i][j] = Lanes::fma(Lanes::load_part(t.a + i * t.lda + c, left), w, acc[i][j]);
    }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < MB; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) sums[i * NR + j] = acc[i][j];
}

// C[i, j] = alpha sum + beta C[i, j] (C not read when beta is 0)
template <int MB, int NR>
void tile_kernel(const Tile& t, float alpha, float beta, float* c, int64_t ldc) {
  constexpr int kSums = (MB * NR + 7) / 8 * 8;  // whole groups of 8 for the lane sums
  V sums[kSums];
  for (int i = MB * NR; i < kSums; ++i) sums[i] = Lanes::zero();
  if (t.prefetch)
    accumulate<MB, NR, true>(t, sums);
  else
    accumulate<MB, NR, false>(t, sums);
  float total[kSums];
  for (int g = 0; g < kSums; g += 8) Lanes::sum8(sums + g, total + g);
  for (int i = 0; i < MB; ++i)
    for (int j = 0; j < NR; ++j) {
      float& out = c[i * ldc + j];
      const float s = alpha * total[i * NR + j];
      out = beta == 0.0f ? s : s + beta * out;
    }
}

using TileFn = void (*)(const Tile&, float, float, float*, int64_t);

template <int MB, int... NR>
constexpr TileFn tile_row_of(int nr, std::integer_sequence<int, NR...>) {
  TileFn fns[] = {tile_kernel<MB, NR + 1>...};
  return fns[nr - 1];
}
template <int MB>
TileFn tile_for(int nr) {
  return tile_row_of<MB>(nr, std::make_integer_sequence<int, kColsFor[MB - 1]>{});
}
TileFn tile_for(int mb, int nr) {
  switch (mb) {
    case 1: return tile_for<1>(nr);
    case 2: return tile_for<2>(nr);
    case 3: return tile_for<3>(nr);
    case 4: return tile_for<4>(nr);
    case 5: return tile_for<5>(nr);
    default: return tile_for<6>(nr);
  }
}

// Columns [j0, j1) of C, a block of W rows at a time: each tile of A's rows (near-equal tiles of
// at most 4) against the block's rows a few at a time; the first tile reads the block from
// memory, the others from L2.
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
      const int cols = kColsFor[mb - 1];
      for (int64_t j = b; j < b1; j += cols) {
        const int n = static_cast<int>(std::min<int64_t>(cols, b1 - j));
        const Tile tile{g.a + i0 * g.lda, g.lda, g.b + j * g.ldb, g.ldb, g.k, t == 0};
        tile_for(mb, n)(tile, g.alpha, g.beta, g.c + i0 * g.ldc + j, g.ldc);
      }
    }
  }
}

}  // namespace

bool few_rows_available() { return true; }

void gemm_few_rows(const GemmArgs& g) {
  detail::check_gemm_args(g, "gemm_few_rows");
  check(!g.trans_a && g.trans_b, "gemm_few_rows: needs A [m, k] and B [n, k] (x W^T)");
  if (g.m == 0 || g.n == 0) return;
  check(g.m <= kMaxTiles * kMaxTileRows, "gemm_few_rows: m = ", g.m, " is not few");
  const bool parallel = g.m * g.n * g.k >= kParallelWork && !omp_in_parallel();
#pragma omp parallel if (parallel)
  {
    // contiguous column ranges, each a multiple of 8 (whole tiles) but the last
    const int threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t blocks = (g.n + 7) / 8;
    const int64_t j0 = std::min(g.n, blocks * t / threads * 8), j1 = std::min(g.n, blocks * (t + 1) / threads * 8);
    if (j0 < j1) run_columns(g, j0, j1);
  }
}

#else

bool few_rows_available() { return false; }
void gemm_few_rows(const GemmArgs&) { fail("gemm_few_rows: built without AVX-512 or AVX2 + FMA"); }

#endif

}  // namespace attn
