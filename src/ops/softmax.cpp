#include "attn/ops/softmax.h"

#include <cmath>
#include <limits>

#include "attn/kernels/elementwise.h"
#include "attn/kernels/vexp.h"
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
      const float mx = max_of(xr, d);
      // log sum_i exp(x_i) = max + log sum_i exp(x_i - max)
      const float lse = mx + std::log(sum_exp(xr, d, mx));
      for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] - lse;
    }
  });
}

namespace {

// An op on each row of the last dimension: forward_rows(x, y, rows, d) computes it,
// backward_row(y, dy, dx, d) one row's input gradient from its output.
template <class ForwardRows, class BackwardRow>
Var rowwise(const Var& x, ForwardRows forward_rows, BackwardRow backward_row) {
  Tensor xv = x.value().contiguous();
  int64_t d = xv.size(-1), rows = xv.numel() / std::max<int64_t>(d, 1);
  Tensor out = Tensor::empty(xv.shape());
  forward_rows(xv.data<float>(), out.data<float>(), rows, d);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, y, rows, d, backward_row]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(gy.shape());
    const float* py = y.value().data<float>();
    const float* pg = gy.data<float>();
    float* px = gx.data<float>();
    parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) backward_row(py + r * d, pg + r * d, px + r * d, d);
    });
    detail::give_grad(x, std::move(gx));
  });
  return y;
}

}  // namespace

Var softmax(const Var& x) {
  return rowwise(x, softmax_rows, [](const float* y, const float* dy, float* dx, int64_t d) {
    // dx_i = y_i (dy_i - sum_j dy_j y_j)
    float dot = 0.0f;
    for (int64_t i = 0; i < d; ++i) dot += dy[i] * y[i];
    for (int64_t i = 0; i < d; ++i) dx[i] = y[i] * (dy[i] - dot);
  });
}

Var log_softmax(const Var& x) {
  return rowwise(x, log_softmax_rows, [](const float* y, const float* dy, float* dx, int64_t d) {
    // dx_i = dy_i - exp(y_i) sum_j dy_j
    float sum = 0.0f;
    for (int64_t i = 0; i < d; ++i) sum += dy[i];
    for (int64_t i = 0; i < d; ++i) dx[i] = dy[i] - std::exp(y[i]) * sum;
  });
}

}  // namespace attn
