#include "attn/ops/layer_norm.h"

#include <cmath>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "grad_target.h"

namespace attn {

Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps) {
  Tensor xv = x.value().contiguous();
  int64_t d = xv.size(-1), rows = xv.numel() / d;
  if (!(gamma.value().numel() == d && beta.value().numel() == d))
    fail("layer_norm: gamma ",
        shape_str(gamma.shape()), " and beta ", shape_str(beta.shape()), " for input ",
        shape_str(xv.shape()));
  Tensor out = Tensor::empty(xv.shape());
  Tensor xhat = Tensor::empty(xv.shape());  // kept for backward
  Tensor rstd = Tensor::empty({rows});
  const float* px = xv.data<float>();
  const float* g = gamma.value().data<float>();
  const float* b = beta.value().data<float>();
  float* py = out.data<float>();
  float* ph = xhat.data<float>();
  float* pr = rstd.data<float>();
  parallel_for(rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = px + r * d;
      float mean = 0.0f;
      for (int64_t i = 0; i < d; ++i) mean += xr[i];
      mean /= static_cast<float>(d);
      float var = 0.0f;
      for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
      var /= static_cast<float>(d);
      float rs = 1.0f / std::sqrt(var + eps);
      pr[r] = rs;
      for (int64_t i = 0; i < d; ++i) {
        float h = (xr[i] - mean) * rs;
        ph[r * d + i] = h;
        py[r * d + i] = g[i] * h + b[i];
      }
    }
  });
  bool grad = needs_grad({&x, &gamma, &beta});
  Var y = make_output(out, grad);
  if (!grad) return y;
  // With xhat = (x - mean) rstd and dxhat = dy gamma:
  //   dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)),  dgamma = sum dy xhat,  dbeta = sum dy
  record_backward([x, gamma, beta, y, xhat, rstd, rows, d]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    const float* pg = gy.data<float>();
    const float* ph = xhat.data<float>();
    const float* g = gamma.value().data<float>();
    if (x.requires_grad()) {
      Tensor gx = Tensor::empty(gy.shape());
      float* pgx = gx.data<float>();
      const float* pr = rstd.data<float>();
      parallel_for(rows, 16, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          float m1 = 0.0f, m2 = 0.0f;
          for (int64_t i = 0; i < d; ++i) {
            float dh = pg[r * d + i] * g[i];
            m1 += dh;
            m2 += dh * ph[r * d + i];
          }
          m1 /= static_cast<float>(d);
          m2 /= static_cast<float>(d);
          for (int64_t i = 0; i < d; ++i)
            pgx[r * d + i] = pr[r] * (pg[r * d + i] * g[i] - m1 - ph[r * d + i] * m2);
        }
      });
      detail::give_grad(x, std::move(gx));
    }
    if (gamma.requires_grad() || beta.requires_grad()) {
      // Partial sums over 8 fixed blocks of rows (in parallel), then added in order: the same
      // result for any thread count.
      constexpr int64_t kBlocks = 8;
      Tensor part = Tensor::zeros({kBlocks, 2, d});
      float* pp = part.data<float>();
      parallel_for(kBlocks, 1, [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) {
          float* sg = pp + k * 2 * d;
          float* sb = sg + d;
          for (int64_t r = rows * k / kBlocks; r < rows * (k + 1) / kBlocks; ++r)
            for (int64_t i = 0; i < d; ++i) {
              sg[i] += pg[r * d + i] * ph[r * d + i];
              sb[i] += pg[r * d + i];
            }
        }
      });
      Tensor gg = Tensor::zeros({d}), gb = Tensor::zeros({d});
      float* pgg = gg.data<float>();
      float* pgb = gb.data<float>();
      for (int64_t k = 0; k < kBlocks; ++k)
        for (int64_t i = 0; i < d; ++i) {
          pgg[i] += pp[k * 2 * d + i];
          pgb[i] += pp[k * 2 * d + d + i];
        }
      if (gamma.requires_grad()) gamma.accumulate_grad(gg.reshape(gamma.shape()));
      if (beta.requires_grad()) beta.accumulate_grad(gb.reshape(beta.shape()));
    }
  });
  return y;
}

}  // namespace attn
