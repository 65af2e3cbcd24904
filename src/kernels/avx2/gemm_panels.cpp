// The AVX2 kernel of the fp32 panels (include/attn/kernels/gemm_panels.h): tiles of up to 6 rows of
// x against one panel, 12 accumulators, k in blocks of kPanelDepth. (No AVX-512 form: oneDNN runs
// these products on AVX-512 CPUs.)
#include <algorithm>

#include "../gemm_panels_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {
namespace {

constexpr int kTileRows = 6;
constexpr int64_t kPrefetchAhead = 256;  // floats of the panel ahead of the tile's reads (1 KB)

// out[r][0..15] (+)= sum over kk < k of x[r, kk] panel[kk][0..15] for r < R (R <= 6): one chain of
// FMAs per output, in k order; `accumulate` adds to out instead of overwriting it.
template <int R>
void tile(const float* x, int64_t ldx, const float* panel, int64_t k, float* out, bool accumulate) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *x0 = x, *x1 = x + ldx, *x2 = x + 2 * ldx, *x3 = x + 3 * ldx, *x4 = x + 4 * ldx, *x5 = x + 5 * ldx;
  // (named accumulators, not an array: GCC 12 stores an array of them back to the stack every step)
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* w = panel + kk * kPanelWidth;
    const __m256 b0 = _mm256_loadu_ps(w), b1 = _mm256_loadu_ps(w + 8);
    _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchAhead), _MM_HINT_T0);
    // one row of x: its value at kk times the panel's 16 outputs
    auto row = [kk, b0, b1](const float* xr, __m256& lo, __m256& hi) {
      const __m256 a = _mm256_broadcast_ss(xr + kk);
      lo = _mm256_fmadd_ps(a, b0, lo);
      hi = _mm256_fmadd_ps(a, b1, hi);
    };
    row(x0, c00, c01);
    if constexpr (R > 1) row(x1, c10, c11);
    if constexpr (R > 2) row(x2, c20, c21);
    if constexpr (R > 3) row(x3, c30, c31);
    if constexpr (R > 4) row(x4, c40, c41);
    if constexpr (R > 5) row(x5, c50, c51);
  }
  auto put = [out, accumulate](int r, __m256 lo, __m256 hi) {
    float* o = out + r * kPanelWidth;
    if (accumulate) lo = _mm256_add_ps(lo, _mm256_loadu_ps(o)), hi = _mm256_add_ps(hi, _mm256_loadu_ps(o + 8));
    _mm256_storeu_ps(o, lo);
    _mm256_storeu_ps(o + 8, hi);
  };
  put(0, c00, c01);
  if constexpr (R > 1) put(1, c10, c11);
  if constexpr (R > 2) put(2, c20, c21);
  if constexpr (R > 3) put(3, c30, c31);
  if constexpr (R > 4) put(4, c40, c41);
  if constexpr (R > 5) put(5, c50, c51);
}

void run_tile(int rows, const float* x, int64_t ldx, const float* panel, int64_t k, float* out, bool accumulate) {
  switch (rows) {
    case 6: return tile<6>(x, ldx, panel, k, out, accumulate);
    case 5: return tile<5>(x, ldx, panel, k, out, accumulate);
    case 4: return tile<4>(x, ldx, panel, k, out, accumulate);
    case 3: return tile<3>(x, ldx, panel, k, out, accumulate);
    case 2: return tile<2>(x, ldx, panel, k, out, accumulate);
    default: return tile<1>(x, ldx, panel, k, out, accumulate);
  }
}

// The rows of the next tile when `left` remain: 6, but the last 7 or 8 go as 4 + 3 or 4 + 4
// rather than leave a tile of 1 or 2 rows, which would load W for little arithmetic.
int tile_rows(int64_t left) {
  return left == 7 || left == 8 ? 4 : static_cast<int>(std::min<int64_t>(kTileRows, left));
}

// Panels [p0, p1) for all m rows.
void run_panels(int64_t m, const float* x, int64_t ldx, const F32Panels& w, float beta, float* y, int64_t ldy,
                const float* bias, int64_t p0, int64_t p1) {
  run_panels_with<kTileRows>(run_tile, tile_rows, m, x, ldx, w, beta, y, ldy, bias, p0, p1);
}

}  // namespace

template <>
void fill_gemm_panels<Isa::avx2>(KernelTable& t) {
  t.panels_run = run_panels;
}

}  // namespace attn::detail
