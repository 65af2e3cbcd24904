// attn::gemm: argument checks, the dispatch between backends, the naive reference, the batched
// form and the thread count. The backends themselves are in gemm_onednn.cpp.
#include "attn/kernels/gemm.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/cpu.h"
#include "attn/kernels/denormals.h"
#include "attn/kernels/gemm_few_rows.h"
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

const char* backend_name(GemmBackend b) {
  switch (b) {
    case GemmBackend::automatic: return "automatic";
    case GemmBackend::onednn: return "onednn_sgemm";
    case GemmBackend::onednn_matmul: return "onednn_matmul";
    case GemmBackend::few_rows: return "few_rows";
    case GemmBackend::reference: return "reference";
  }
  return "?";
}

// Measured (docs/performance.md): dnnl_sgemm everywhere, except
// - x W^T with M <= 16 (decoding at batch 1, a beam of 4, the last sentences of a batch), where
//   gemm_few_rows reads W in place: 0.9-2.1x dnnl_sgemm with W streamed from memory (Zen 3;
//   1.4-2.1x at M = 2 and 4, bench_gemm --few-rows);
// - x W^T with 16 <= M <= 32 (a decoding step of a few sentences times beams, weights in
//   PyTorch's [out, in] layout), where the matmul primitive is 1.2-1.7x faster on 2 threads (and
//   0.9-1.3x on 1);
// - A^T B over K >= 1024 rows with N < 2048 (a weight gradient dW = dY^T X in training), where the
//   matmul primitive is 1.05-1.9x faster on 2 threads (dnnl_sgemm stalls on M = 1024-2048).
// On AVX-512 CPUs (active_isa(): the kernels' choice, so that ATTN_ISA=avx2 runs these products as
// on an AVX2 CPU), three more (a Zen 5; docs/performance.md):
// - x W^T over 33-512 rows (decoding a batch, beams, the encoder of a translation batch): the
//   matmul primitive 1.1-2.5x dnnl_sgemm (2 threads, K = 512 rows 2 KB apart, N = 512-8000; its
//   creation, ~0.26 ms a new shape, included);
// - x W^T with K >= 1024 columns a multiple of 4 KB long (the FFN's second layer, d_ff = 1024 or
//   2048), any rows: the matmul primitive 1.3-1.4x (4096 x 256 x 1024: 448 against 338 GFLOPS;
//   4096 x 512 x 2048: 457 against 330);
// - A^T B whose B rows are 4 KB apart and A's are not (the FFN's second-layer weight gradient
//   dW2 = dY^T H): dnnl_sgemm, not the matmul primitive of the rule below (256 x 1024 x 4096: 417
//   against 357).
GemmBackend gemm_dispatch(const GemmArgs& g) {
  if (!g.trans_a && g.trans_b && g.m <= kFewRowsMax && few_rows_available()) return GemmBackend::few_rows;
  if (!g.trans_a && g.trans_b && g.m >= 16 && g.m <= 32) return GemmBackend::onednn_matmul;
  if (active_isa() == Isa::avx512) {
    using detail::aliased_ld;
    if (!g.trans_a && g.trans_b && g.m <= 512) return GemmBackend::onednn_matmul;
    if (!g.trans_a && g.trans_b && g.k >= 1024 && g.n <= 1024 && (aliased_ld(g.lda) || aliased_ld(g.ldb)))
      return GemmBackend::onednn_matmul;
    if (g.trans_a && !g.trans_b && g.k >= 1024 && aliased_ld(g.ldb) && !aliased_ld(g.lda)) return GemmBackend::onednn;
  }
  if (g.trans_a && !g.trans_b && g.k >= 1024 && g.n < 2048) return GemmBackend::onednn_matmul;
  return GemmBackend::onednn;
}

void gemm(const GemmArgs& g, GemmBackend backend) {
  detail::check_gemm_args(g, "gemm");
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g);
  if (backend == GemmBackend::automatic) backend = gemm_dispatch(g);
  switch (backend) {
    case GemmBackend::automatic:
    case GemmBackend::onednn: return detail::gemm_onednn(g);
    case GemmBackend::onednn_matmul: {
      detail::MatmulCall call{false, g.trans_a, g.trans_b, 1, g.m, g.n, g.k, g.alpha, g.beta,
                              g.a, g.lda, 0, g.b, g.ldb, 0, g.c, g.ldc, 0};
      return detail::matmul_onednn(call);
    }
    case GemmBackend::few_rows: return gemm_few_rows(g);
    case GemmBackend::reference: return gemm_reference(g);
  }
}

namespace {

// The rows of a stored [rows, cols] operand (leading dimension ld) copied into a per-thread buffer
// whose rows are `padded` floats apart; returns it.
const float* padded_copy(const float* src, int64_t rows, int64_t cols, int64_t ld, int64_t padded, int slot) {
  thread_local std::vector<float> buffers[2];
  std::vector<float>& b = buffers[slot];
  b.resize(static_cast<size_t>(rows * padded));
  float* dst = b.data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) std::copy(src + r * ld, src + r * ld + cols, dst + r * padded);
  return dst;
}

}  // namespace

// A weight gradient dW = dY^T X over K >= 1024 rows whose dY or X rows are a multiple of 4 KB
// apart (the FFN's d_ff = 1024 or 2048 columns) runs at half speed on the AVX2 CPU measured (a
// Zen 3: 64-69 GFLOPS for 1024 x 256 x 4096 where 117-124 with rows 64 bytes longer; the cache
// sets alias in oneDNN's packing). Such an operand is copied to longer rows first: 16 MB for
// that shape, and the small model's training step went from 0.60-0.63 to 0.72 of the GEMM peak.
// dY rows 2 KB apart (d_model = 512, the cross-attention's keys and values of d_model 256) slow
// it too: 91 -> 117 GFLOPS for 512 x 512 x 4096 and 86 -> 100 for 512 x 256 x 4096 with dY
// copied (medians of 5; X rows 2 KB apart gained nothing: 122 -> 110-118 for 256 x 512 x 4096).
// Not measured on AVX-512 CPUs, where the matmul primitive ran these shapes at 136-163 GFLOPS
// of a 190 peak: they keep the plain call.
void gemm(const GemmArgs& g) {
  using detail::aliased_ld;
  const bool copy_a = detail::aliased_ld_of_a(g.trans_a, g.lda);
  if (active_isa() != Isa::avx512 && g.trans_a && !g.trans_b && g.k >= 1024 && g.m >= 256 && g.n >= 256 &&
      (copy_a || aliased_ld(g.ldb))) {
    GemmArgs h = g;
    if (copy_a) {
      h.lda = detail::unaliased_ld(g.lda);
      h.a = padded_copy(g.a, g.k, g.m, g.lda, h.lda, 0);
    }
    if (aliased_ld(g.ldb)) {
      h.ldb = detail::unaliased_ld(g.ldb);
      h.b = padded_copy(g.b, g.k, g.n, g.ldb, h.ldb, 1);
    }
    return gemm(h, GemmBackend::automatic);
  }
  gemm(g, GemmBackend::automatic);
}

// Measured (docs/performance.md): one batched matmul primitive is 1.04-1.8x faster on attention's
// [32..128 x 64] products; for vector products (a decoding step) the OpenMP split is 1.4-2.2x faster.
BatchedBackend batched_dispatch(const GemmArgs& g, int64_t batch) {
  if (g.m == 1 || g.n == 1 || batch == 1) return BatchedBackend::parallel_onednn;
  return BatchedBackend::onednn_matmul;
}

const char* batched_backend_name(BatchedBackend b) {
  switch (b) {
    case BatchedBackend::automatic: return "automatic";
    case BatchedBackend::parallel_onednn: return "omp_over_batch+onednn";
    case BatchedBackend::onednn_matmul: return "onednn_batched_matmul";
    case BatchedBackend::reference: return "reference";
  }
  return "?";
}

void gemm_batched(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c, BatchedBackend backend) {
  detail::check_gemm_args(g, "gemm_batched");
  check(batch >= 0, "gemm_batched: negative batch ", batch);
  check(stride_a >= 0 && stride_b >= 0, "gemm_batched: negative stride_a=", stride_a,
        " or stride_b=", stride_b);
  check(batch <= 1 || g.m == 0 || g.n == 0 || stride_c >= (g.m - 1) * g.ldc + g.n,
        "gemm_batched: stride_c=", stride_c, " makes the [", g.m, ", ", g.n, "] outputs (ldc=",
        g.ldc, ") overlap");
  if (batch == 0 || g.m == 0 || g.n == 0) return;
  if (backend == BatchedBackend::automatic) backend = batched_dispatch(g, batch);

  auto item = [&](int64_t i) {
    GemmArgs gi = g;
    gi.a = g.a ? g.a + i * stride_a : nullptr;
    gi.b = g.b ? g.b + i * stride_b : nullptr;
    gi.c = g.c + i * stride_c;
    return gi;
  };
  if (backend == BatchedBackend::onednn_matmul && g.k > 0) {
    detail::MatmulCall call{false, g.trans_a, g.trans_b, batch, g.m, g.n, g.k, g.alpha, g.beta,
                            g.a, g.lda, stride_a, g.b, g.ldb, stride_b, g.c, g.ldc, stride_c};
    return detail::matmul_onednn(call);
  }
  if (backend == BatchedBackend::reference) {
    for (int64_t i = 0; i < batch; ++i) gemm_reference(item(i));
    return;
  }
  // Fewer items than threads: each product gets all the threads instead.
  if (batch < num_threads() || omp_in_parallel()) {
    for (int64_t i = 0; i < batch; ++i) gemm(item(i));
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < batch; ++i) {
    const GemmArgs gi = item(i);
    if (g.k == 0) scale_c(gi);
    else detail::gemm_onednn(gi);  // runs on one thread inside a parallel region
  }
}

void gemm_batched(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c) {
  gemm_batched(g, batch, stride_a, stride_b, stride_c, BatchedBackend::automatic);
}

void set_num_threads(int n) {
  check(n >= 1, "set_num_threads: need at least one thread, got ", n);
  omp_set_num_threads(n);  // oneDNN takes omp_get_max_threads() at each call
  flush_denormals(true);   // on every worker, old and new (see kernels/denormals.h)
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace attn
