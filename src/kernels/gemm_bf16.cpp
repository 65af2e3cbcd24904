// attn::gemm_bf16: A and B in bf16, f32 accumulation and output, through a cached oneDNN matmul
// primitive (AMX tiles on CPUs that have them); where oneDNN has no bf16 matmul (AVX2), the
// operands widened to f32 through attn::gemm. The f32 form rounds its inputs into per-thread
// bf16 buffers first.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "attn/error.h"
#include "attn/parallel.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/onednn_rows.h"
#include "attn/kernels/precision.h"
#include "gemm_backends.h"

namespace attn {

namespace {

// The stored bf16 [rows, cols] matrix (leading dimension ld) widened, exactly, into f32 rows of
// `out` that are `padded` floats apart.
void widen_rows(const uint16_t* src, int64_t rows, int64_t cols, int64_t ld, int64_t padded,
                std::vector<float>& out) {
  if (out.size() < static_cast<size_t>(rows * padded)) out.resize(rows * padded);
  float* dst = out.data();
  for_each_index(rows, rows * cols >= (1 << 16), [&](int64_t r) {
    for (int64_t j = 0; j < cols; ++j) dst[r * padded + j] = bf16_to_float(src[r * ld + j]);
  });
}

// bf16 products on a CPU whose oneDNN has no bf16 matmul (AVX2): the operands widened to f32,
// which is exact, and multiplied through attn::gemm, so the product takes fp32's kernels and
// dispatch (gemm_few_rows, dnnl_sgemm, the matmul primitive) and differs from fp32 only in the
// rounded inputs.
void gemm_bf16_widened(const GemmBf16Args& g) {
  thread_local std::vector<float> a32, b32;
  const int64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
  const int64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
  // rows kept off multiples of 4 KB apart as they are widened (gemm_backends.h)
  const int64_t lda = detail::aliased_ld_of_a(g.trans_a, a_cols) ? detail::unaliased_ld(a_cols) : a_cols;
  const int64_t ldb = detail::aliased_ld(b_cols) ? detail::unaliased_ld(b_cols) : b_cols;
  widen_rows(g.a, a_rows, a_cols, g.lda, lda, a32);
  widen_rows(g.b, b_rows, b_cols, g.ldb, ldb, b32);
  float beta = g.beta;
  if (g.bias) {  // attn::gemm has no epilogue: C starts as the bias
    for (int64_t i = 0; i < g.m; ++i) std::copy(g.bias, g.bias + g.n, g.c + i * g.ldc);
    beta = 1.0f;
  }
  gemm({g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, beta, a32.data(), lda, b32.data(), ldb, g.c, g.ldc});
}

// Rounds the stored [rows, cols] matrix (leading dimension ld) into `out`, packed (ld = cols).
void pack_bf16(const float* src, int64_t rows, int64_t cols, int64_t ld, std::vector<uint16_t>& out) {
  if (out.size() < static_cast<size_t>(rows * cols)) out.resize(rows * cols);
  uint16_t* dst = out.data();
  if (ld == cols) return round_to_bf16(src, dst, rows * cols);
  for_each_index(rows, rows * cols >= (1 << 16), [&](int64_t r) {
    for (int64_t j = 0; j < cols; ++j) dst[r * cols + j] = float_to_bf16(src[r * ld + j]);
  });
}

}  // namespace

void gemm_bf16(const GemmBf16Args& g) {
  GemmArgs shape{g.trans_a, g.trans_b, g.m,   g.n, g.k, g.alpha, g.beta,
                 reinterpret_cast<const float*>(g.a), g.lda,
                 reinterpret_cast<const float*>(g.b), g.ldb, g.c, g.ldc};
  detail::check_gemm_args(shape, "gemm_bf16");
  check(!g.bias || (g.alpha == 1.0f && g.beta == 0.0f), "gemm_bf16: a bias needs alpha 1 and beta 0, got ",
        g.alpha, " and ", g.beta);
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // no products: C = beta * C (+ bias)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        float& c = g.c[i * g.ldc + j];
        c = (g.beta == 0.0f ? 0.0f : g.beta * c) + (g.bias ? g.bias[j] : 0.0f);
      }
    return;
  }
  // the table's plan for bf16-rounded operands: oneDNN's bf16 matmul, or the values widened to f32
  const ProductPlan plan = plan_product({.cls = ProductClass::rounded_bf16, .precision = Precision::bf16});
  if (plan.kernel == Kernel::f32_of_bf16) return gemm_bf16_widened(g);
  // The rows in a multiple of 64, then the rest (onednn_rows.h): rows of A start `head` rows
  // down, or `head` columns along when A is stored transposed.
  const int64_t head = onednn_head_rows(g.m);
  detail::matmul_onednn({true, g.trans_a, g.trans_b, 1, head, g.n, g.k, g.alpha, g.beta, g.a, g.lda, 0, g.b,
                         g.ldb, 0, g.c, g.ldc, 0, g.bias});
  if (head < g.m) {
    const uint16_t* a = g.a + (g.trans_a ? head : head * g.lda);
    detail::matmul_onednn({true, g.trans_a, g.trans_b, 1, g.m - head, g.n, g.k, g.alpha, g.beta, a, g.lda, 0,
                           g.b, g.ldb, 0, g.c + head * g.ldc, g.ldc, 0, g.bias});
  }
}

void gemm_bf16(const GemmArgs& g) {
  detail::check_gemm_args(g, "gemm_bf16");
  if (g.m == 0 || g.n == 0) return;
  thread_local std::vector<uint16_t> a16, b16;
  const int64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
  const int64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
  pack_bf16(g.a, a_rows, a_cols, g.lda, a16);
  pack_bf16(g.b, b_rows, b_cols, g.ldb, b16);
  GemmBf16Args h{g.trans_a, g.trans_b, g.m,     g.n, g.k, g.alpha, g.beta,
                 a16.data(), std::max<int64_t>(a_cols, 1),
                 b16.data(), std::max<int64_t>(b_cols, 1), g.c, g.ldc};
  gemm_bf16(h);
}

}  // namespace attn
