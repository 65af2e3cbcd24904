#include "attn/ops/softmax.h"

#include <cmath>
#include <limits>

#include "attn/kernels/elementwise.h"
#include "grad_target.h"

namespace attn {

void softmax_rows(const float* x, float* y, int64_t rows, int64_t d) {
  parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(d, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * d;
      float* yr = y + r * d;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < d; ++i) mx = std::max(mx, xr[i]);
      if (mx == -std::numeric_limits<float>::infinity()) {  // every entry masked: no attention
        for (int64_t i = 0; i < d; ++i) yr[i] = 0.0f;
        continue;
      }
      float sum = 0.0f;
      for (int64_t i = 0; i < d; ++i) sum += (yr[i] = std::exp(xr[i] - mx));
      float inv = 1.0f / sum;
      for (int64_t i = 0; i < d; ++i) yr[i] *= inv;
    }
  });
}

void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t d) {
  parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(d, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * d;
      float* yr = y + r * d;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < d; ++i) mx = std::max(mx, xr[i]);
      float sum = 0.0f;
      for (int64_t i = 0; i < d; ++i) sum += std::exp(xr[i] - mx);
      float lse = mx + std::log(sum);
      for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] - lse;
    }
  });
}

Var softmax(const Var& x) {
  Tensor xv = x.value().contiguous();
  int64_t d = xv.size(-1), rows = xv.numel() / std::max<int64_t>(d, 1);
  Tensor out = Tensor::empty(xv.shape());
  softmax_rows(xv.data<float>(), out.data<float>(), rows, d);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  // dx_i = y_i (dy_i - sum_j dy_j y_j)
  record_backward([x, y, rows, d]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(gy.shape());
    const float* py = y.value().data<float>();
    const float* pg = gy.data<float>();
    float* px = gx.data<float>();
    parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float dot = 0.0f;
        for (int64_t i = 0; i < d; ++i) dot += pg[r * d + i] * py[r * d + i];
        for (int64_t i = 0; i < d; ++i) px[r * d + i] = py[r * d + i] * (pg[r * d + i] - dot);
      }
    });
    detail::give_grad(x, std::move(gx));
  });
  return y;
}

Var log_softmax(const Var& x) {
  Tensor xv = x.value().contiguous();
  int64_t d = xv.size(-1), rows = xv.numel() / std::max<int64_t>(d, 1);
  Tensor out = Tensor::empty(xv.shape());
  log_softmax_rows(xv.data<float>(), out.data<float>(), rows, d);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  // dx_i = dy_i - exp(y_i) sum_j dy_j
  record_backward([x, y, rows, d]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(gy.shape());
    const float* py = y.value().data<float>();
    const float* pg = gy.data<float>();
    float* px = gx.data<float>();
    parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float sum = 0.0f;
        for (int64_t i = 0; i < d; ++i) sum += pg[r * d + i];
        for (int64_t i = 0; i < d; ++i) px[r * d + i] = pg[r * d + i] - std::exp(py[r * d + i]) * sum;
      }
    });
    detail::give_grad(x, std::move(gx));
  });
  return y;
}

}  // namespace attn
