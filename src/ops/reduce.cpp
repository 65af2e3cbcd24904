#include "attn/ops/reduce.h"

#include "attn/error.h"

namespace attn {
namespace {

// y[o, i] = s * sum_r x[o, r, i] with x viewed as [outer, n, inner];  dx[o, r, i] = s dy[o, i]
Var reduce_dim(const Var& x, int64_t dim, bool keepdim, float s) {
  Tensor xv = x.value().contiguous();
  int64_t nd = xv.dim();
  if (dim < 0) dim += nd;
  if (!(dim >= 0 && dim < nd))
    fail("sum: dim ", dim, " out of range for ", shape_str(xv.shape()));
  int64_t n = xv.size(dim), outer = 1, inner = 1;
  for (int64_t k = 0; k < dim; ++k) outer *= xv.size(k);
  for (int64_t k = dim + 1; k < nd; ++k) inner *= xv.size(k);
  Shape out_shape = xv.shape();
  if (keepdim) out_shape[dim] = 1;
  else out_shape.erase(out_shape.begin() + dim);
  Tensor out = Tensor::zeros(out_shape);
  const float* px = xv.data<float>();
  float* py = out.data<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < inner; ++i) py[o * inner + i] += px[(o * n + r) * inner + i];
  for (int64_t i = 0; i < out.numel(); ++i) py[i] *= s;
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, y, outer, n, inner, s]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    float* gx = x.grad_buffer().data<float>();
    const float* pg = gy.data<float>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 0; r < n; ++r)
        for (int64_t i = 0; i < inner; ++i) gx[(o * n + r) * inner + i] += s * pg[o * inner + i];
  });
  return y;
}

Var reduce_all(const Var& x, bool average) {
  Var flat = x;
  int64_t n = x.value().numel();
  Tensor xv = x.value().contiguous();
  double acc = 0.0;
  const float* px = xv.data<float>();
  for (int64_t i = 0; i < n; ++i) acc += px[i];
  float s = average ? 1.0f / static_cast<float>(n) : 1.0f;
  Tensor out = Tensor::full({}, static_cast<float>(acc) * s);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  // dx_i = s dy
  record_backward([x, y, s, n]() mutable {
    if (!y.grad().defined()) return;
    float g = s * y.grad().data<float>()[0];
    float* gx = x.grad_buffer().data<float>();
    for (int64_t i = 0; i < n; ++i) gx[i] += g;
  });
  return y;
}

}  // namespace

Var sum(const Var& x) { return reduce_all(x, false); }
Var mean(const Var& x) { return reduce_all(x, true); }
Var sum(const Var& x, int64_t dim, bool keepdim) { return reduce_dim(x, dim, keepdim, 1.0f); }
Var mean(const Var& x, int64_t dim, bool keepdim) {
  int64_t d = dim < 0 ? dim + x.dim() : dim;
  return reduce_dim(x, dim, keepdim, 1.0f / static_cast<float>(x.size(d)));
}

}  // namespace attn
