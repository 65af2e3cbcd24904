// Inference products with the weight prepared once, in bf16 or int8 (include/attn/kernels/
// precision.h), or in fp32 with W packed for products of many rows:
//   y = x W^T + beta y,   x f32 [m, k] (row stride ldx), W [n, k], y f32 [m, n] (row stride ldy)
// bf16: W rounded to bf16 once, x at each call; f32 accumulation.
// int8 (CTranslate2's scheme): W quantized once, symmetric per output row,
//   W_q[j, :] = round(W[j, :] / s_w[j]),  s_w[j] = max|W[j, :]| / 127   (s8; 63 on CPUs
//   without VNNI, int8_weight_max())
// x quantized at each call the same way per row (s_x[i], s8), products accumulated in s32 by
// oneDNN (VNNI / AMX), or for few rows (decoding) by attn's VNNI kernel (gemm_s8_gemv.h), then
//   y[i, j] = fma(s_x[i] s_w[j], acc[i, j], beta y[i, j])   in f32 (y = (s_x s_w) acc if beta = 0)
//
// The weight is kept in the layout oneDNN's kernel asks for (blocked for AMX/VNNI), reordered
// once per layout, and for int8 also in the VNNI kernel's panels (packed once). Primitives are
// cached by shape, as gemm_bf16's are.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

#include "attn/kernels/dispatch.h"
#include "attn/kernels/onednn_rows.h"
#include "attn/kernels/precision.h"

namespace attn {

// q[r, :] = round(x[r, :] / scales[r]), scales[r] = max|x[r, :]| / qmax (1 for an all-zero row);
// x has row stride ld, q is dense [rows, cols].
void quantize_rows_s8(const float* x, int64_t rows, int64_t cols, int64_t ld, int8_t* q, float* scales,
                      int qmax = 127);

// The int8 product's epilogue over m rows of n columns: y[r, j] = fma(sx[r] sw[j], acc[r, j], bias[j])
// with a bias, (sx[r] sw[j]) acc[r, j] when beta is 0, else fma(sx[r] sw[j], acc[r, j], beta y[r, j]).
// acc is dense [m, n], y has row stride ldy. One rounding order on every instruction set (an fma
// rounds once), so the kernel table's forms give the same bits.
void dequantize_rows(int64_t m, int64_t n, const int32_t* acc, const float* sx, const float* sw, const float* bias,
                     float beta, float* y, int64_t ldy);

// The largest |W_q| of an int8 weight: 127 where the CPU has VNNI (cpu_has_int8_dot()), 63
// elsewhere. Without VNNI oneDNN forms u8 x s8 pair sums in s16, with x shifted to u8 (0..255):
// 2 x 255 x 63 = 32130 fits, 2 x 255 x 127 would saturate. oneDNN's int8 guide gives this advice.
int int8_weight_max();

struct PackedWeight;  // a weight [n, k] in bf16 or s8 with its scales (src/kernels/gemm_int8.cpp)

// W [n, k] with row stride ldw, converted for `p` into the forms plan_weight gives
// (kernels/dispatch.h): bf16 or int8; or fp32 for the rows f32_packed_for() takes: packed into
// panels where they run (include/attn/kernels/gemm_panels.h), else reordered into oneDNN's f32
// matmul layout.
std::shared_ptr<const PackedWeight> pack_weight(Precision p, const float* w, int64_t n, int64_t k, int64_t ldw);
Precision packed_precision(const PackedWeight& w);
int64_t packed_weight_bytes(const PackedWeight& w);  // its copies of the weight, in every layout made so far

// The int8 products gemm_packed runs (the dispatch table's frozen-weight rules): oneDNN's matmul
// (Kernel::onednn_s8), or attn's VNNI kernel for few rows (Kernel::s8_rows, gemm_s8_gemv.h) for
// m <= kS8GemvMaxRows when the CPU build has it, and for every m on AVX2 CPUs without VNNI. Both
// give the same bits.
inline constexpr int64_t kS8GemvMaxRows = 8;  // by bench_gemm_int8: VNNI ahead at m <= 4, even at 8
// oneDNN's int8 product runs on a row count rounded up (zero rows added): to a multiple of
// kS8RowBucket, and past kOnednnNarrowRows to a multiple of kOnednnRowBlock (onednn_rows.h).
inline constexpr int64_t kS8RowBucket = 16;
inline int64_t s8_padded_rows(int64_t m) {
  const int64_t bucket = m <= kOnednnNarrowRows ? kS8RowBucket : kOnednnRowBlock;
  return (m + bucket - 1) / bucket * bucket;
}

// The rows of one oneDNN int8 product when gemm_packed splits mp (= s8_padded_rows(m)) rows of n
// outputs: past kOnednnNarrowRows, a multiple of kOnednnRowBlock whose s32 sums take at most
// about kS8AccBlockBytes (so that they are read back from cache, not memory); mp itself below.
inline constexpr int64_t kS8AccBlockBytes = int64_t{1} << 20;
inline int64_t s8_row_block(int64_t mp, int64_t n) {
  if (mp <= kOnednnNarrowRows) return mp;
  const int64_t rows = kS8AccBlockBytes / (4 * std::max<int64_t>(n, 1)) / kOnednnRowBlock * kOnednnRowBlock;
  return std::min(mp, std::max(rows, kOnednnRowBlock));
}

struct PackedGemmArgs {
  int64_t m = 0;
  const float* x = nullptr;
  int64_t ldx = 0;
  float beta = 0.0f;  // 0: y is not read
  float* y = nullptr;
  int64_t ldy = 0;
  // int8 only: Kernel::s8_rows or Kernel::onednn_s8 forced (benchmarks, tests); unset, the plan's
  std::optional<Kernel> kernel;
  // [n] added to every row in place of beta y (beta must be 0): int8 adds it in the product's
  // epilogue, y = fma(s_x s_w, acc, bias), the bits of a y holding the bias with beta 1, and so
  // does fp32 (y = acc + bias); bf16 copies it into y first.
  const float* bias = nullptr;
};
// The plan gemm_packed runs: the table's for x W^T over g.m rows with w frozen (its kernel forced
// by g.kernel for an int8 w).
ProductPlan plan_packed(const PackedGemmArgs& g, const PackedWeight& w);
void gemm_packed(const PackedGemmArgs& g, const PackedWeight& w);
bool uses_s8_gemv(const PackedGemmArgs& g, const PackedWeight& w);  // the VNNI kernel would run

}  // namespace attn
