// x W^T for a few rows of x (a decoding step at batch 1, a beam of 4, the last sentences of a
// batch), in fp32:
//   C[i, j] = alpha sum_k A[i, k] B[j, k] + beta C[i, j],   i < m (few), j < n, B = W [n, k]
// with W in PyTorch's [out, in] layout, read where it lies: no packing. Each output is a dot
// product of two contiguous rows, accumulated in vector lanes and summed across them at the end
// (8 sums at a time by a tree of horizontal adds). A tile takes up to 6 rows of A against 2-8
// rows of W; W goes by blocks of 128 KB, read from memory (with the next rows prefetched) by the
// first tile of A's rows and from L2 by the others.
//
// Why: at m <= 8 a decoding step of the base model reads its 104 MB of weights once and does
// little arithmetic on them, so it is bound by memory; dnnl_sgemm packs its operands at every
// call and streams W at 11-14 GB/s at m = 2-4, where this kernel reaches 16-31.
// Measured (bench_gemm --few-rows, W streamed from memory, 2 threads, Zen 3): against dnnl_sgemm
// 1.4-2.1x at m = 2 and 4, 1.05-1.5x at 8, 1.1-1.3x at 16, 0.9-1.25x at 1 (bound by memory
// either way), even at 32 (so gemm() keeps oneDNN past 16). Details: docs/performance.md.
// The columns are split among the threads (when not already inside a parallel region).
// Runs on AVX-512 or AVX2 + FMA CPUs (active_isa(), kernels/cpu.h; few_rows_available()); elsewhere
// gemm() keeps dnnl_sgemm.
// A row's result does not depend on m (each dot product's order is fixed).
#pragma once

#include <cstdint>

#include "attn/kernels/gemm.h"

namespace attn {

// The largest m gemm() gives to gemm_few_rows (x W^T only).
inline constexpr int64_t kFewRowsMax = 16;

bool few_rows_available();
// g: !trans_a, trans_b (B is [n, k] with row stride ldb), any m.
void gemm_few_rows(const GemmArgs& g);

}  // namespace attn
