// Private to src/kernels: the loop of gemm_f32_panels over panels and row tiles, shared by the
// AVX2 and AVX-512 kernels (avx2/gemm_panels.cpp, avx512/gemm_panels.cpp), each with its own tile.
#pragma once

#include <algorithm>
#include <cstdint>

#include "attn/kernels/gemm_panels.h"

namespace attn::detail {

// Panels [p0, p1) for all m rows: tiles of tile_rows(rows left) rows (at most TileRows), each run
// by run_tile(rows, x, ldx, panel slice, k, out, accumulate) over k in blocks of kPanelDepth, then
// its sums written to y with the bias, or beta y. (Always inlined: each unit keeps its own copy,
// kernel_table.h.)
template <int TileRows, typename RunTile, typename NextRows>
[[gnu::always_inline]] inline void run_panels_with(const RunTile& run_tile, const NextRows& tile_rows, int64_t m,
                                                   const float* x, int64_t ldx, const F32Panels& w, float beta,
                                                   float* y, int64_t ldy, const float* bias, int64_t p0, int64_t p1) {
  alignas(64) float out[TileRows * kPanelWidth];
  for (int64_t p = p0; p < p1; ++p) {
    const float* panel = w.data.get() + p * w.k * kPanelWidth;
    const int64_t j0 = p * kPanelWidth, cols = std::min(kPanelWidth, w.n - j0);
    for (int64_t r0 = 0; r0 < m;) {
      const int rows = tile_rows(m - r0);
      for (int64_t k0 = 0; k0 < w.k; k0 += kPanelDepth)
        run_tile(rows, x + r0 * ldx + k0, ldx, panel + k0 * kPanelWidth, std::min(kPanelDepth, w.k - k0), out, k0 > 0);
      for (int r = 0; r < rows; ++r) {
        float* yr = y + (r0 + r) * ldy + j0;
        const float* o = out + r * kPanelWidth;
        if (bias)
          for (int64_t j = 0; j < cols; ++j) yr[j] = o[j] + bias[j0 + j];
        else
          for (int64_t j = 0; j < cols; ++j) yr[j] = beta == 0.0f ? o[j] : o[j] + beta * yr[j];
      }
      r0 += rows;
    }
  }
}

}  // namespace attn::detail
