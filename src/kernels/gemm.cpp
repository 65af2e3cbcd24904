// attn::gemm: argument checks, the executors of the dispatch table's plans (kernels/dispatch.h),
// the naive reference, the batched form and the thread count. The oneDNN kernels themselves are in
// gemm_onednn.cpp.
#include "attn/kernels/gemm.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/cpu.h"
#include "attn/kernels/denormals.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm_few_rows.h"
#include "attn/kernels/gemm_small.h"
#include "attn/parallel.h"
#include "gemm_backends.h"

namespace attn {

namespace detail {

void check_gemm_args(const GemmArgs& g, const char* who) {
  check(g.m >= 0 && g.n >= 0 && g.k >= 0, who, ": negative size m=", g.m, " n=", g.n, " k=", g.k);
  const int64_t a_cols = g.trans_a ? g.m : g.k;  // A is stored [k, m] when transposed
  const int64_t b_cols = g.trans_b ? g.k : g.n;
  check(g.lda >= a_cols && g.lda >= 1, who, ": lda=", g.lda, " is less than the ", a_cols,
        " columns of A (m=", g.m, " k=", g.k, " trans_a=", g.trans_a, ")");
  check(g.ldb >= b_cols && g.ldb >= 1, who, ": ldb=", g.ldb, " is less than the ", b_cols,
        " columns of B (k=", g.k, " n=", g.n, " trans_b=", g.trans_b, ")");
  check(g.ldc >= g.n && g.ldc >= 1, who, ": ldc=", g.ldc, " is less than n=", g.n);
  if (g.m > 0 && g.n > 0) {
    check(g.c != nullptr, who, ": C is null for an [", g.m, ", ", g.n, "] product");
    check(g.k == 0 || (g.a != nullptr && g.b != nullptr), who, ": A or B is null (m=", g.m,
          " n=", g.n, " k=", g.k, ")");
  }
}

}  // namespace detail

namespace {

// C = beta * C, with beta == 0 writing zeros (C is not read).
void scale_c(const GemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i) {
    float* row = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j) row[j] = g.beta == 0.0f ? 0.0f : g.beta * row[j];
  }
}

}  // namespace

void gemm_reference(const GemmArgs& g) {
  detail::check_gemm_args(g, "gemm_reference");
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < g.k; ++p) {
        const float a = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
        const float b = g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
        sum += static_cast<double>(a) * b;
      }
      float& c = g.c[i * g.ldc + j];
      const double old = g.beta == 0.0f ? 0.0 : static_cast<double>(g.beta) * c;
      c = static_cast<float>(g.alpha * sum + old);
    }
  }
}

ProductPlan plan_gemm(const GemmArgs& g) {
  return plan_product(gemm_product(g.trans_a, g.trans_b, g.m, g.n, g.k, g.lda, g.ldb));
}

namespace {

// The rows of a stored [rows, cols] operand (leading dimension ld) copied into a per-thread buffer
// whose rows are `padded` floats apart; returns it.
const float* padded_copy(const float* src, int64_t rows, int64_t cols, int64_t ld, int64_t padded, int slot) {
  thread_local std::vector<float> buffers[2];
  std::vector<float>& b = buffers[slot];
  b.resize(static_cast<size_t>(rows * padded));
  float* dst = b.data();
  for_each_index(rows, true, [&](int64_t r) { std::copy(src + r * ld, src + r * ld + cols, dst + r * padded); });
  return dst;
}

// g with the operands the plan copies (their rows a multiple of 4 KB apart; A's of 2 KB as a
// weight gradient reads them) copied to rows 64 bytes longer (detail::unaliased_ld).
GemmArgs unaliased(const GemmArgs& g, const ProductPlan& plan) {
  GemmArgs h = g;
  if (plan.copy_a) {
    h.lda = detail::unaliased_ld(g.lda);
    h.a = padded_copy(g.a, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k, g.lda, h.lda, 0);
  }
  if (plan.copy_b) {
    h.ldb = detail::unaliased_ld(g.ldb);
    h.b = padded_copy(g.b, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n, g.ldb, h.ldb, 1);
  }
  return h;
}

// The kernel on g, checked and with m, n and k all positive.
void run_kernel(const GemmArgs& g, Kernel kernel) {
  switch (kernel) {
    case Kernel::onednn_matmul: {
      detail::MatmulCall call{false, g.trans_a, g.trans_b, 1, g.m, g.n, g.k, g.alpha, g.beta,
                              g.a, g.lda, 0, g.b, g.ldb, 0, g.c, g.ldc, 0};
      return detail::matmul_onednn(call);
    }
    case Kernel::few_rows: return gemm_few_rows(g);
    case Kernel::reference: return gemm_reference(g);
    default: return detail::gemm_onednn(g);  // onednn_sgemm, and what no f32 plan of gemm's names
  }
}

}  // namespace

// The plan: its copies, then its kernel (benchmarks force a kernel with no copies: they compare
// kernels on the operands as given).
void gemm(const GemmArgs& g, const ProductPlan& plan) {
  if (plan.kernel == Kernel::small_block) return gemm_small(g);  // its own checks, on this thread
  detail::check_gemm_args(g, "gemm");
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g);
  run_kernel(plan.copy_a || plan.copy_b ? unaliased(g, plan) : g, plan.kernel);
}

void gemm(const GemmArgs& g) {
  detail::check_gemm_args(g, "gemm");
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g);  // nothing to choose
  const ProductPlan plan = plan_gemm(g);  // the table, asked once
  run_kernel(plan.copy_a || plan.copy_b ? unaliased(g, plan) : g, plan.kernel);
}

void gemm_attention_block(const GemmArgs& g) {
  Product p;
  p.cls = ProductClass::attention_block;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  gemm(g, plan_product(p));
}

// The dispatch table's plan for a batch of products (kernels/dispatch.h).
ProductPlan plan_batched(const GemmArgs& g, int64_t batch) {
  Product p;
  p.cls = g.m == 1 || g.n == 1 || batch == 1 ? ProductClass::batched_vectors : ProductClass::batched_blocks;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  p.batch = batch;
  return plan_product(p);
}

void gemm_batched(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c, const ProductPlan& plan) {
  detail::check_gemm_args(g, "gemm_batched");
  check(batch >= 0, "gemm_batched: negative batch ", batch);
  check(stride_a >= 0 && stride_b >= 0, "gemm_batched: negative stride_a=", stride_a,
        " or stride_b=", stride_b);
  check(batch <= 1 || g.m == 0 || g.n == 0 || stride_c >= (g.m - 1) * g.ldc + g.n,
        "gemm_batched: stride_c=", stride_c, " makes the [", g.m, ", ", g.n, "] outputs (ldc=",
        g.ldc, ") overlap");
  if (batch == 0 || g.m == 0 || g.n == 0) return;

  auto item = [&](int64_t i) {
    GemmArgs gi = g;
    gi.a = g.a ? g.a + i * stride_a : nullptr;
    gi.b = g.b ? g.b + i * stride_b : nullptr;
    gi.c = g.c + i * stride_c;
    return gi;
  };
  if (plan.kernel == Kernel::batched_matmul && g.k > 0) {
    detail::MatmulCall call{false, g.trans_a, g.trans_b, batch, g.m, g.n, g.k, g.alpha, g.beta,
                            g.a, g.lda, stride_a, g.b, g.ldb, stride_b, g.c, g.ldc, stride_c};
    return detail::matmul_onednn(call);
  }
  if (plan.kernel == Kernel::reference) {
    for (int64_t i = 0; i < batch; ++i) gemm_reference(item(i));
    return;
  }
  // omp_over_batch. Fewer items than threads: each product gets all the threads instead.
  if (batch < num_threads() || omp_in_parallel()) {
    for (int64_t i = 0; i < batch; ++i) gemm(item(i));
    return;
  }
  for_each_index(batch, true, [&](int64_t i) {
    const GemmArgs gi = item(i);
    if (g.k == 0) scale_c(gi);
    else detail::gemm_onednn(gi);  // on one thread: inside the region, or the only one
  });
}

void gemm_batched(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c) {
  gemm_batched(g, batch, stride_a, stride_b, stride_c, plan_batched(g, batch));
}

void set_num_threads(int n) {
  check(n >= 1, "set_num_threads: need at least one thread, got ", n);
  omp_set_num_threads(n);  // oneDNN takes omp_get_max_threads() at each call
  flush_denormals(true);   // on every worker, old and new (see kernels/denormals.h)
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace attn
