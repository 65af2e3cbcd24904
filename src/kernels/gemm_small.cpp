// gemm_small (include/attn/kernels/gemm_small.h): the checks, then the kernel table's product;
// the generic form is plain loops (AVX2 and AVX-512: avx2/gemm_small.cpp, avx512/gemm_small.cpp).
#include "attn/kernels/gemm_small.h"

#include <vector>

#include "gemm_backends.h"
#include "kernel_table.h"

namespace attn {
namespace detail {
namespace {

void gemm_small_loops(const GemmArgs& g, float*) {
  for (int64_t i = 0; i < g.m; ++i) {
    float* c = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < g.k; ++p) {
        const float a = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
        const float b = g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
        sum += a * b;
      }
      c[j] = g.alpha * sum + (g.beta == 0.0f ? 0.0f : g.beta * c[j]);
    }
  }
}

}  // namespace

template <>
void fill_gemm_small<Isa::generic>(KernelTable& t) {
  t.gemm_small = gemm_small_loops;
}

}  // namespace detail

void gemm_small(const GemmArgs& g) {
  detail::check_gemm_args(g, "gemm_small");
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // C = beta C: A and B (possibly null) are not read, nor offset
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] = g.beta == 0.0f ? 0.0f : g.beta * g.c[i * g.ldc + j];
    return;
  }
  // op(B) = B^T: the kernels copy B to [k, n] first, into this (allocated here, not in the per-Isa
  // units: kernel_table.h)
  thread_local std::vector<float> packed;
  if (g.trans_b) packed.resize(static_cast<size_t>(g.k * g.n));
  detail::kernel_table().gemm_small(g, packed.data());
}

}  // namespace attn
