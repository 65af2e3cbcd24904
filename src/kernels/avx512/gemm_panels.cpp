// The AVX-512 kernel of the fp32 panels (include/attn/kernels/gemm_panels.h): tiles of up to 12
// rows of x against one panel (one vector of 16 outputs a row), k in blocks of kPanelDepth.
// One panel at a time, so that each thread reads its panels as one stream, in the order they are
// stored: the hardware prefetcher follows one stream better than several side by side (the rule
// gemm_few_rows follows too). The dispatch table gives it the products of a few rows of a large W
// (kernels/dispatch.cpp).
#include <algorithm>

#include "../gemm_panels_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {
namespace {

constexpr int kTileRows = 12;
constexpr int64_t kPrefetchAhead = 512;  // floats of the panel ahead of the tile's reads (2 KB)

// out[r][0..15] (+)= sum over kk < k of x[r, kk] panel[kk][0..15] for r < R (R <= 12): one chain of
// FMAs per output, in k order; `accumulate` adds to out instead of overwriting it. (The loops over
// r are unrolled so that the accumulators stay in registers.)
template <int R>
void tile(const float* x, int64_t ldx, const float* panel, int64_t k, float* out, bool accumulate) {
  __m512 c[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) c[r] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* w = panel + kk * kPanelWidth;
    const __m512 b = _mm512_loadu_ps(w);
    _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchAhead), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) c[r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + kk]), b, c[r]);
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    float* o = out + r * kPanelWidth;
    _mm512_storeu_ps(o, accumulate ? _mm512_add_ps(c[r], _mm512_loadu_ps(o)) : c[r]);
  }
}

void run_tile(int rows, const float* x, int64_t ldx, const float* panel, int64_t k, float* out, bool accumulate) {
  switch (rows) {
    case 12: return tile<12>(x, ldx, panel, k, out, accumulate);
    case 11: return tile<11>(x, ldx, panel, k, out, accumulate);
    case 10: return tile<10>(x, ldx, panel, k, out, accumulate);
    case 9: return tile<9>(x, ldx, panel, k, out, accumulate);
    case 8: return tile<8>(x, ldx, panel, k, out, accumulate);
    case 7: return tile<7>(x, ldx, panel, k, out, accumulate);
    case 6: return tile<6>(x, ldx, panel, k, out, accumulate);
    case 5: return tile<5>(x, ldx, panel, k, out, accumulate);
    case 4: return tile<4>(x, ldx, panel, k, out, accumulate);
    case 3: return tile<3>(x, ldx, panel, k, out, accumulate);
    case 2: return tile<2>(x, ldx, panel, k, out, accumulate);
    default: return tile<1>(x, ldx, panel, k, out, accumulate);
  }
}

// Panels [p0, p1) for all m rows, in tiles of 12 rows and the rest.
void run_panels(int64_t m, const float* x, int64_t ldx, const F32Panels& w, float beta, float* y, int64_t ldy,
                const float* bias, int64_t p0, int64_t p1) {
  const auto tile_rows = [](int64_t left) { return static_cast<int>(std::min<int64_t>(kTileRows, left)); };
  run_panels_with<kTileRows>(run_tile, tile_rows, m, x, ldx, w, beta, y, ldy, bias, p0, p1);
}

}  // namespace

template <>
void fill_gemm_panels<Isa::avx512>(KernelTable& t) {
  t.panels_run = run_panels;
}

}  // namespace attn::detail
