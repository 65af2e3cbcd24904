// One entry point for every matrix product in attn (CTranslate2's primitives::gemm):
//   C = alpha * op(A) op(B) + beta * C,   op(X) = X or X^T,
// row-major, with leading dimensions in elements. Which kernel runs is the dispatch table's
// choice (kernels/dispatch.h): mostly oneDNN (dnnl_sgemm, or its matmul primitive for shapes where
// it was measured faster), attn's gemm_few_rows for x W^T over a few rows. oneDNN runs on the same
// OpenMP (libgomp) threads as attn's own loops, so the two never oversubscribe the cores. Debian's
// OpenBLAS (gemm_openblas.h) is kept out of gemm(): its pthreads busy-wait after every call and
// slow the OpenMP work that runs meanwhile 5-9x; it stays for comparison in benchmarks.
// gemm_reference is the naive triple loop the tests compare with.
//
// As with any BLAS, beta == 0 means C is not read (NaNs in it do not propagate). Results are
// deterministic for a fixed thread count.
#pragma once

#include <cstdint>

#include "attn/kernels/dispatch.h"

namespace attn {

struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;  // op(A) is [m, k], op(B) is [k, n], C is [m, n]
  float alpha = 1.0f, beta = 0.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
};

void gemm(const GemmArgs& g);
void gemm_reference(const GemmArgs& g);  // naive loops, f64 accumulation, single thread

// A batch of equally shaped products, A, B and C each advancing by its own stride per item
// (a zero stride for A or B shares one matrix). Many small products (attention heads): see
// plan_batched() below.
void gemm_batched(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c);

// Threads used by attn's own loops and by the BLAS backend (OpenMP's count, which oneDNN
// follows). Default: OMP_NUM_THREADS if set, else all cores. Applies to the calling thread and
// to threads it starts afterwards, as omp_set_num_threads does. Also flushes denormals to zero on
// all of them (kernels/denormals.h).
void set_num_threads(int n);
int num_threads();

// ---- Plans (kernels/dispatch.h), and the executors that run them. ----
// gemm(g) runs plan_gemm(g), gemm_batched(g, ...) plan_batched(g, batch). Benchmarks and tests
// force a kernel with the two below (no operand copies): the x W^T and plain kernels
// onednn_sgemm, onednn_matmul, few_rows, small_block, reference; for a batch omp_over_batch,
// batched_matmul, reference.
ProductPlan plan_gemm(const GemmArgs& g);
ProductPlan plan_batched(const GemmArgs& g, int64_t batch);
void gemm(const GemmArgs& g, const ProductPlan& plan);
inline void gemm(const GemmArgs& g, Kernel kernel) { gemm(g, ProductPlan{.kernel = kernel}); }
void gemm_batched(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c, const ProductPlan& plan);
inline void gemm_batched(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b, int64_t stride_c,
                         Kernel kernel) {
  gemm_batched(g, batch, stride_a, stride_b, stride_c, ProductPlan{.kernel = kernel});
}

// One (batch, head) block of attention, on the calling thread (inside a parallel loop over the
// blocks): the kernel the table gives an attention block (small_block, or dnnl_sgemm).
void gemm_attention_block(const GemmArgs& g);

// ---- bf16 (reduced-precision training and inference). ----
// A and B are rounded to bf16 (round to nearest even), products accumulate in f32, C is f32.
// oneDNN matmul primitive (AMX / AVX512-BF16 where the CPU has them), cached by shape; where
// oneDNN has no bf16 matmul, the bf16 values widened to f32 and multiplied by gemm().
void gemm_bf16(const GemmArgs& g);

// The same with A and B already in bf16 (raw bits, the upper half of an f32), e.g. weights
// converted once with round_to_bf16() (include/attn/kernels/bf16.h).
struct GemmBf16Args {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const uint16_t* a = nullptr;
  int64_t lda = 0;
  const uint16_t* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  // when set: C = A B + bias, n floats added to every row in the product's epilogue (no pass of
  // its own over C); only with alpha 1 and beta 0
  const float* bias = nullptr;
};
void gemm_bf16(const GemmBf16Args& g);

// ---- Peak, for reporting other kernels as a fraction of it. ----
// The shape the "GEMM peak" is defined on: M=4096, K=512, N=2048 (a d_model=512 -> d_ff=2048
// projection of 4096 tokens), fp32, no transposes.
constexpr int64_t kPeakM = 4096, kPeakN = 2048, kPeakK = 512;
// GFLOPS of gemm() on that shape with `threads` threads, best of ~0.5 s of repeated runs.
// Restores the previous thread count.
double measure_gemm_peak_gflops(int threads);

}  // namespace attn
