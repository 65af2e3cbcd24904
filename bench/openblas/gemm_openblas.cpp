// OpenBLAS versions of attn's products, for comparison only (gemm_openblas.h).
#include "gemm_openblas.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "attn/error.h"
#include "gemm_backends.h"

namespace attn {

namespace {

// y[0..len) (stride incy) = alpha * M x + beta * y for the row-major matrix `mat` of `rows`
// rows, or alpha * M^T x + beta * y with `transposed`. Here `len` is the length of y.
struct Gemv {
  bool transposed;
  int64_t rows, cols;  // of the stored matrix
  const float* mat;
  int64_t ld;
  const float* x;
  int64_t incx;
  float* y;
  int64_t incy;
};

// One block [begin, end) of y, on the calling thread.
void gemv_block(const Gemv& v, float alpha, float beta, int64_t begin, int64_t end) {
  if (begin >= end) return;
  float* y = v.y + begin * v.incy;
  if (beta == 0.0f)  // BLAS semantics: y is not read, so a NaN in it must not survive
    for (int64_t i = 0; i < end - begin; ++i) y[i * v.incy] = 0.0f;
  if (v.transposed) {  // y = M^T x: the block is a range of columns of M
    cblas_sgemv(CblasRowMajor, CblasTrans, v.rows, end - begin, alpha, v.mat + begin, v.ld, v.x,
                v.incx, beta, y, v.incy);
  } else {  // y = M x: the block is a range of rows of M
    cblas_sgemv(CblasRowMajor, CblasNoTrans, end - begin, v.cols, alpha, v.mat + begin * v.ld,
                v.ld, v.x, v.incx, beta, y, v.incy);
  }
}

// OpenBLAS's pool at `threads` for one call, back to one thread afterwards.
template <typename F>
void with_openblas_threads(int threads, F f) {
  check(threads >= 1, "gemm_openblas: need at least one thread, got ", threads);
  openblas_set_num_threads(threads);
  f();
  openblas_set_num_threads(1);
}

void sgemm(const GemmArgs& g) {
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
              g.trans_b ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b,
              g.ldb, g.beta, g.c, g.ldc);
}

// The product as one gemv over the whole output (m == 1 or n == 1).
Gemv as_gemv(const GemmArgs& g, int64_t& len) {
  detail::check_gemm_args(g, "gemv_openblas");
  check(g.m == 1 || g.n == 1, "gemv_openblas: needs m == 1 or n == 1, got m=", g.m, " n=", g.n);
  Gemv v{};
  if (g.m == 1) {
    // C[1, n] = a[1, k] op(B): x is A's only row (or column), y is C's row.
    len = g.n;
    v.x = g.a;
    v.incx = g.trans_a ? g.lda : 1;
    v.y = g.c;
    v.incy = 1;
    v.mat = g.b;
    v.ld = g.ldb;
    v.transposed = !g.trans_b;  // B stored [k, n] -> y = B^T x; stored [n, k] -> y = B x
    v.rows = g.trans_b ? g.n : g.k;
    v.cols = g.trans_b ? g.k : g.n;
  } else {
    // C[m, 1] = op(A) b[k, 1]: x is B's only column (or row), y is C's column.
    len = g.m;
    v.x = g.b;
    v.incx = g.trans_b ? 1 : g.ldb;
    v.y = g.c;
    v.incy = g.ldc;
    v.mat = g.a;
    v.ld = g.lda;
    v.transposed = g.trans_a;  // A stored [k, m] -> y = A^T x
    v.rows = g.trans_a ? g.k : g.m;
    v.cols = g.trans_a ? g.m : g.k;
  }
  return v;
}

}  // namespace

void gemm_openblas(const GemmArgs& g, int threads) {
  detail::check_gemm_args(g, "gemm_openblas");
  if (g.m == 0 || g.n == 0) return;
  with_openblas_threads(threads, [&] { sgemm(g); });
}

void gemv_openblas(const GemmArgs& g, int threads) {
  int64_t len = 0;
  const Gemv v = as_gemv(g, len);
  if (g.k == 0) return gemm(g);  // just C = beta * C
  with_openblas_threads(threads, [&] { gemv_block(v, g.alpha, g.beta, 0, len); });
}

void gemv_openblas_split(const GemmArgs& g) {
  int64_t len = 0;
  const Gemv v = as_gemv(g, len);
  if (g.k == 0) return gemm(g);
  openblas_set_num_threads(1);
  // Below ~64K multiply-adds one thread is faster than waking the others.
  const bool parallel = len * g.k >= (1 << 16) && len >= 64 && !omp_in_parallel();
  if (!parallel) return gemv_block(v, g.alpha, g.beta, 0, len);
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    // Blocks of whole 64-byte lines of y so that threads never share one.
    const int64_t chunk = ((len + threads - 1) / threads + 15) / 16 * 16;
    gemv_block(v, g.alpha, g.beta, std::min(len, t * chunk), std::min(len, (t + 1) * chunk));
  }
}

void gemm_batched_openblas(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                           int64_t stride_c) {
  detail::check_gemm_args(g, "gemm_batched_openblas");
  if (g.m == 0 || g.n == 0 || g.k == 0) return gemm_batched(g, batch, stride_a, stride_b, stride_c);
  openblas_set_num_threads(1);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < batch; ++i) {
    GemmArgs gi = g;
    gi.a = g.a + i * stride_a;
    gi.b = g.b + i * stride_b;
    gi.c = g.c + i * stride_c;
    sgemm(gi);
  }
}

const char* openblas_core_name() { return openblas_get_corename(); }

}  // namespace attn
