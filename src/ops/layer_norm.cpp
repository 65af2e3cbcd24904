// Layer norm, and the residual connection fused into it (post-LN's LN(x + Sublayer(x))), forward
// and backward side by side. The row loops take their pointers by value and reduce with
// `omp simd` so that they vectorise.
#include "attn/ops/layer_norm.h"
#include "attn/ops/add_layer_norm.h"

#include <cmath>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "column_sums.h"
#include "grad_target.h"

namespace attn {
namespace {

// One row: xhat = (x - mean) rstd, y = gamma xhat + beta; returns rstd. x may be xhat or y; xhat
// null: not kept (no backward will read it, and its stores cost as much as the rest of the row).
float normalize_row(const float* x, float* xhat, float* y, const float* g, const float* b, int64_t d,
                    float eps) {
  float mean = 0.0f;
#pragma omp simd reduction(+ : mean)
  for (int64_t i = 0; i < d; ++i) mean += x[i];
  mean /= static_cast<float>(d);
  float var = 0.0f;
#pragma omp simd reduction(+ : var)
  for (int64_t i = 0; i < d; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(d);
  float rs = 1.0f / std::sqrt(var + eps);
  if (!xhat) {
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) y[i] = g[i] * ((x[i] - mean) * rs) + b[i];
    return rs;
  }
  for (int64_t i = 0; i < d; ++i) {
    float h = (x[i] - mean) * rs;
    xhat[i] = h;
    y[i] = g[i] * h + b[i];
  }
  return rs;
}

// s = a + b for one row (into xhat's row, then normalised in place)
void add_row(const float* a, const float* b, float* s, int64_t d) {
  for (int64_t i = 0; i < d; ++i) s[i] = a[i] + b[i];
}

// What the backward needs: xhat [rows, d] and rstd [rows] (xhat undefined when no backward will run).
struct Normalized {
  Tensor out, xhat, rstd;
  int64_t rows = 0, d = 0;
};

// LN over the rows of a (+ b, when b is given: the same shape, dense); xhat kept for a backward.
Normalized normalize(const Tensor& a, const Tensor* b, const Var& gamma, const Var& beta, float eps,
                     bool keep_xhat, const char* op) {
  Normalized n;
  n.d = a.size(-1);
  n.rows = a.numel() / n.d;
  if (!(gamma.value().numel() == n.d && beta.value().numel() == n.d))
    fail(op, ": gamma ", shape_str(gamma.shape()), " and beta ", shape_str(beta.shape()), " for input ",
         shape_str(a.shape()));
  n.out = Tensor::empty(a.shape());
  if (keep_xhat) n.xhat = Tensor::empty(a.shape());
  n.rstd = Tensor::empty({n.rows});
  const float* pa = a.data<float>();
  const float* pb = b ? b->data<float>() : nullptr;
  const float* g = gamma.value().data<float>();
  const float* bt = beta.value().data<float>();
  float* py = n.out.data<float>();
  float* ph = keep_xhat ? n.xhat.data<float>() : nullptr;
  float* pr = n.rstd.data<float>();
  const int64_t d = n.d;
  parallel_for(n.rows, 16, [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* x = pa + r * d;
      float* h = ph ? ph + r * d : nullptr;
      if (pb) {  // the sum goes where it is normalised: xhat's row, or y's
        float* s = h ? h : py + r * d;
        add_row(x, pb + r * d, s, d);
        x = s;
      }
      pr[r] = normalize_row(x, h, py + r * d, g, bt, d, eps);
    }
  });
  return n;
}

// dx for rows [r0, r1):  dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dxhat = dy gamma.
// Written to dx1 (beta1 = 0: overwrite, 1: add) and, when given, dx2 (beta2 likewise).
struct DxTargets {
  float* dx1 = nullptr;
  float beta1 = 0.0f;
  float* dx2 = nullptr;
  float beta2 = 0.0f;
};

void backward_rows(const float* gy, const float* xhat, const float* rstd, const float* g, int64_t d,
                   int64_t r0, int64_t r1, DxTargets t) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* pg = gy + r * d;
    const float* ph = xhat + r * d;
    float m1 = 0.0f, m2 = 0.0f;
#pragma omp simd reduction(+ : m1, m2)
    for (int64_t i = 0; i < d; ++i) {
      float dh = pg[i] * g[i];
      m1 += dh;
      m2 += dh * ph[i];
    }
    m1 /= static_cast<float>(d);
    m2 /= static_cast<float>(d);
    const float rs = rstd[r];
    float* o1 = t.dx1 + r * d;
    float* o2 = t.dx2 ? t.dx2 + r * d : nullptr;
    for (int64_t i = 0; i < d; ++i) {
      float v = rs * (pg[i] * g[i] - m1 - ph[i] * m2);
      o1[i] = t.beta1 != 0.0f ? o1[i] + v : v;
    }
    if (o2)
      for (int64_t i = 0; i < d; ++i) {
        float v = rs * (pg[i] * g[i] - m1 - ph[i] * m2);
        o2[i] = t.beta2 != 0.0f ? o2[i] + v : v;
      }
  }
}

// The backward of LN(x1 [+ x2]): dx into x1 and x2 (each written straight into its gradient
// buffer), dgamma and dbeta.
void record_layer_norm_backward(const Var& x1, const Var* x2, const Var& gamma, const Var& beta,
                                const Var& y, const Normalized& n) {
  Var second = x2 ? *x2 : Var();
  Tensor xhat = n.xhat, rstd = n.rstd;
  int64_t rows = n.rows, d = n.d;
  record_backward([x1, second, gamma, beta, y, xhat, rstd, rows, d]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    const float* pg = gy.data<float>();
    const float* ph = xhat.data<float>();
    const float* g = gamma.value().data<float>();
    const float* pr = rstd.data<float>();
    DxTargets t;
    if (x1.requires_grad()) t.dx1 = detail::grad_target(x1, &t.beta1);
    if (second.defined() && second.requires_grad()) {
      float* p = detail::grad_target(second, &t.beta2);
      if (t.dx1) {
        t.dx2 = p;
      } else {
        t.dx1 = p;
        t.beta1 = t.beta2;
      }
    }
    if (!gamma.requires_grad() && !beta.requires_grad()) {
      if (t.dx1)
        parallel_for(rows, 16, [=](int64_t r0, int64_t r1) { backward_rows(pg, ph, pr, g, d, r0, r1, t); });
      return;
    }
    // dgamma = sum over rows of dy xhat, dbeta = sum of dy: summed in the pass that makes dx
    Tensor sums = Tensor::zeros({2, d});
    detail::add_column_sums(rows, 2 * d, sums.data<float>(), [=](int64_t r0, int64_t r1, float* acc) {
      if (t.dx1) backward_rows(pg, ph, pr, g, d, r0, r1, t);
      float* __restrict sg = acc;
      float* __restrict sb = acc + d;
      for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict gy_r = pg + r * d;
        const float* __restrict h = ph + r * d;
        for (int64_t i = 0; i < d; ++i) {
          sg[i] += gy_r[i] * h[i];
          sb[i] += gy_r[i];
        }
      }
    });
    if (gamma.requires_grad()) gamma.accumulate_grad(sums.slice(0, 0, 1).reshape(gamma.shape()));
    if (beta.requires_grad()) beta.accumulate_grad(sums.slice(0, 1, 2).reshape(beta.shape()));
  });
}

}  // namespace

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  Tensor xv = x.value().contiguous();
  bool grad = needs_grad({&x, &gamma, &beta});
  Normalized n = normalize(xv, nullptr, gamma, beta, eps, grad, "layer_norm");
  Var y = make_output(n.out, grad);
  if (grad) record_layer_norm_backward(x, nullptr, gamma, beta, y, n);
  return y;
}

// y = LN(a + b);  da = db = dLN  (the sum itself is never stored)
Var add_layer_norm(const Var& a, const Var& b, const Var& gamma, const Var& beta, float eps) {
  Tensor av = a.value().contiguous(), bv = b.value().contiguous();
  if (!(av.shape() == bv.shape()))
    fail("add_layer_norm: operands ", shape_str(av.shape()), " and ", shape_str(bv.shape()),
         " differ (no broadcasting here)");
  bool grad = needs_grad({&a, &b, &gamma, &beta});
  Normalized n = normalize(av, &bv, gamma, beta, eps, grad, "add_layer_norm");
  Var y = make_output(n.out, grad);
  if (grad) record_layer_norm_backward(a, &b, gamma, beta, y, n);
  return y;
}

}  // namespace attn
