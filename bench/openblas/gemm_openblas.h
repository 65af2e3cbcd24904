// OpenBLAS versions of attn's products, kept only to compare against (bench/gemm.cpp and the
// tests); gemm() never calls them (why: include/attn/kernels/gemm.h, docs/performance.md).
// A program that uses nothing from this header does not load OpenBLAS at all.
//
// Debian's libopenblas is the pthread build: its own worker threads, sized here per call and put
// back to one afterwards; they keep busy-waiting for ~0.1 s after a threaded call.
#pragma once

#include <cstdint>

#include "attn/kernels/gemm.h"

namespace attn {

// cblas_sgemm with `threads` OpenBLAS threads.
void gemm_openblas(const GemmArgs& g, int threads);

// M == 1 or N == 1: cblas_sgemv with `threads` OpenBLAS threads.
void gemv_openblas(const GemmArgs& g, int threads);

// M == 1 or N == 1: the output split over attn's OpenMP threads, one single-threaded sgemv per
// block.
void gemv_openblas_split(const GemmArgs& g);

// OpenMP over the batch, one single-threaded cblas_sgemm per item.
void gemm_batched_openblas(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                           int64_t stride_c);

// The kernel family OpenBLAS picked for this CPU ("Cooperlake"), or forced with the
// OPENBLAS_CORETYPE environment variable ("Haswell": AVX2 kernels, about half the speed).
const char* openblas_core_name();

}  // namespace attn
