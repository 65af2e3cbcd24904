// x W^T for a few rows of x (a decoding step at batch 1 or a few beams), in fp32:
//   C[i, j] = alpha sum_k A[i, k] B[j, k] + beta C[i, j],   i < m (few), j < n, B = W [n, k]
// with W in PyTorch's [out, in] layout, read where it lies: no packing. Each output is a dot
// product of two contiguous rows, accumulated in vector lanes and summed across them at the end;
// a tile takes up to 4 rows of A against a few rows of W at once, so every W row is read from
// memory once per product whatever m is, with the A rows (m k floats) kept in L1.
//
// Why: at m <= 8 a decoding step of the base model reads its 104 MB of weights once and does
// little arithmetic on them, so it is bound by memory; dnnl_sgemm packs its operands first (the
// copy costs as much as the product at m = 4). Measured: docs/performance.md.
// The columns are split among the threads (when not already inside a parallel region).
// Built for AVX-512 or AVX2 + FMA (few_rows_available()); elsewhere gemm() keeps dnnl_sgemm.
#pragma once

#include <cstdint>

#include "attn/kernels/gemm.h"

namespace attn {

// The largest m gemm() gives to gemm_few_rows (x W^T only).
inline constexpr int64_t kFewRowsMax = 8;

bool few_rows_available();
// g: !trans_a, trans_b (B is [n, k] with row stride ldb), any m.
void gemm_few_rows(const GemmArgs& g);

}  // namespace attn
