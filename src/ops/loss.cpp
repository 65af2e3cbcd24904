#include "attn/ops/loss.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/vexp.h"
#include "grad_target.h"

namespace attn {
namespace {

// sum_j x_j in double (vectorised: 8 partial sums)
double row_sum(const float* x, int64_t n) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int64_t j = 0; j < n; ++j) s += x[j];
  return s;
}

// The first j with x_j == v (0 if none: a row of NaNs)
int64_t first_index_of(const float* x, int64_t n, float v) {
  for (int64_t j = 0; j < n; ++j)
    if (x[j] == v) return j;
  return 0;
}

}  // namespace

Var cross_entropy(const Var& logits, const Tensor& targets, float eps, int32_t ignore_index,
                  CrossEntropyStats* stats) {
  Tensor z = logits.value().contiguous();
  int64_t V = z.size(-1), N = z.numel() / V;
  if (!(targets.dtype() == DType::i32 && targets.numel() == N))
    fail("cross_entropy: ", N,
        " rows of logits ", shape_str(z.shape()), " but targets ", shape_str(targets.shape()), " ",
        dtype_name(targets.dtype()));
  Tensor tc = targets.contiguous();
  const int32_t* t = tc.data<int32_t>();
  for (int64_t r = 0; r < N; ++r)
    check(t[r] == ignore_index || (t[r] >= 0 && t[r] < V), "cross_entropy: target ", t[r],
          " at row ", r, " out of range for ", V, " classes");
  // One pass per row: lse = log sum_j exp(z_j) (max subtracted), then
  //   -log p[t] = lse - z_t  and  sum_j -log p[j] = V lse - sum_j z_j.
  // Only lse is kept for the backward; log p itself is never stored.
  Tensor lse = Tensor::empty({N});
  const float* zp = z.data<float>();
  float* lp = lse.data<float>();
  std::vector<double> row_nll(N, 0.0), row_smooth(N, 0.0);
  std::vector<int64_t> row_correct(N, 0);
  parallel_for(N, 8, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = zp + r * V;
      float mx = max_of(row, V);
      lp[r] = mx + std::log(sum_exp(row, V, mx));
      if (t[r] == ignore_index) continue;
      double zsum = row_sum(row, V);
      int64_t best = first_index_of(row, V, mx);  // the argmax (its first occurrence)
      row_nll[r] = static_cast<double>(lp[r]) - row[t[r]];
      row_smooth[r] = static_cast<double>(V) * lp[r] - zsum;
      row_correct[r] = best == t[r];
    }
  });
  int64_t count = 0;
  double nll = 0.0, smooth = 0.0;
  int64_t correct = 0;
  for (int64_t r = 0; r < N; ++r) {
    if (t[r] == ignore_index) continue;
    ++count;
    nll += row_nll[r];
    smooth += row_smooth[r];
    correct += row_correct[r];
  }
  if (stats) *stats = {nll, count, correct};
  double loss = count ? ((1.0 - eps) * nll + eps / static_cast<double>(V) * smooth) / count : 0.0;
  bool grad = needs_grad({&logits});
  Var y = make_output(Tensor::full({}, static_cast<float>(loss)), grad);
  if (!grad) return y;
  // dz_rj = dy/n (p_rj - (1 - eps) [j = t_r] - eps/V) for counted rows, 0 for ignored ones,
  // with p_rj = exp(z_rj - lse_r); written straight into the logits' gradient.
  record_backward([logits, z, y, lse, tc, N, V, eps, ignore_index, count]() mutable {
    if (!y.grad().defined() || count == 0) return;
    float g = y.grad().data<float>()[0] / static_cast<float>(count);
    float beta = 0.0f;
    float* gz = detail::grad_target(logits, &beta);
    const float* zp = z.data<float>();
    const float* lp = lse.data<float>();
    const int32_t* t = tc.data<int32_t>();
    float off = eps / static_cast<float>(V);
    bool add = beta != 0.0f;
    parallel_for(N, 8, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* row = gz + r * V;
        if (t[r] == ignore_index) {
          if (!add) std::fill(row, row + V, 0.0f);
          continue;
        }
        exp_affine(zp + r * V, row, V, lp[r], g, -g * off, add);
        row[t[r]] -= g * (1.0f - eps);
      }
    });
  });
  return y;
}

}  // namespace attn
