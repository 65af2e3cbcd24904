#include "attn/ops/shape.h"

#include "attn/error.h"
#include "attn/kernels/elementwise.h"

namespace attn {

// y = x viewed as `shape`;  dx = dy viewed as x's shape
Var reshape(const Var& x, const Shape& shape) {
  Tensor out = x.value().reshape(shape);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, y]() mutable {
    if (y.grad().defined()) x.accumulate_grad(y.grad().reshape(x.shape()));
  });
  return y;
}

// y = x^T(a, b);  dx = dy^T(a, b)
Var transpose(const Var& x, int64_t a, int64_t b) {
  Tensor out = x.value().transpose(a, b);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, y, a, b]() mutable {
    if (y.grad().defined()) x.accumulate_grad(y.grad().transpose(a, b));
  });
  return y;
}

// y = x[start:end] along dim;  dx[start:end] += dy, zero elsewhere
Var slice(const Var& x, int64_t dim, int64_t start, int64_t end) {
  Tensor out = x.value().slice(dim, start, end);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, y, dim, start, end]() mutable {
    if (!y.grad().defined()) return;
    Tensor view = x.grad_buffer().slice(dim, start, end);
    if (view.is_contiguous()) {  // a slice of whole rows (a weight's part): one pass
      add_into(view, y.grad());
      return;
    }
    Tensor sum = view.clone();
    Tensor gy = y.grad();
    // sum = view + dy, written back through the view
    Tensor tmp = Tensor::empty(gy.shape());
    tmp.copy_from(gy);
    const float* a = sum.data<float>();
    float* t = tmp.data<float>();
    for (int64_t i = 0; i < tmp.numel(); ++i) t[i] += a[i];
    view.copy_from(tmp);
  });
  return y;
}

static int64_t normalise_dim(int64_t dim, int64_t n) { return dim < 0 ? dim + n : dim; }

// y = [x_1, x_2, ...] along dim;  dx_i = the slice of dy that x_i fills
Var concat(const std::vector<Var>& xs, int64_t dim) {
  check(!xs.empty(), "concat: no inputs");
  Shape shape = xs[0].shape();
  dim = normalise_dim(dim, static_cast<int64_t>(shape.size()));
  int64_t total = 0;
  for (const Var& x : xs) {
    Shape s = x.shape();
    if (!(s.size() == shape.size()))
      fail("concat: ", shape_str(s), " and ", shape_str(shape));
    s[dim] = shape[dim];
    if (!(s == shape))
      fail("concat: ", shape_str(x.shape()), " and ", shape_str(xs[0].shape()),
          " differ outside dim ", dim);
    total += x.size(dim);
  }
  shape[dim] = total;
  Tensor out = Tensor::empty(shape);
  int64_t at = 0;
  bool grad = false;
  for (const Var& x : xs) {
    out.slice(dim, at, at + x.size(dim)).copy_from(x.value());
    at += x.size(dim);
    grad = grad || needs_grad({&x});
  }
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([xs, y, dim]() mutable {
    if (!y.grad().defined()) return;
    int64_t at = 0;
    for (const Var& x : xs) {
      if (x.requires_grad()) x.accumulate_grad(y.grad().slice(dim, at, at + x.size(dim)));
      at += x.size(dim);
    }
  });
  return y;
}

std::vector<Var> split(const Var& x, const std::vector<int64_t>& sizes, int64_t dim) {
  dim = normalise_dim(dim, x.dim());
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (!(total == x.size(dim)))
    fail("split: sizes add up to ", total, ", dim ", dim, " of ",
        shape_str(x.shape()), " has ", x.size(dim));
  std::vector<Var> parts;
  int64_t at = 0;
  for (int64_t s : sizes) {
    parts.push_back(slice(x, dim, at, at + s));
    at += s;
  }
  return parts;
}

}  // namespace attn
