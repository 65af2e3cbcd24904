// Forward and backward of each element-wise op, side by side.
#include "attn/ops/elementwise.h"

#include <cmath>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "grad_target.h"

namespace attn {
namespace {

enum class BinOp { add, sub, mul, div };

// out[i] = a[i] op b[i] over the broadcast shape; the innermost dimension is the tight loop.
Tensor binary_forward(const Tensor& a, const Tensor& b, BinOp op) {
  Shape shape = broadcast_shapes(a.shape(), b.shape());
  Tensor out = Tensor::empty(shape);
  Shape sa = broadcast_strides(a, shape), sb = broadcast_strides(b, shape);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out.data<float>();
  int64_t n = static_cast<int64_t>(shape.size());
  int64_t inner = n ? shape[n - 1] : 1;
  int64_t ia = n ? sa[n - 1] : 0, ib = n ? sb[n - 1] : 0;
  int64_t rows = inner ? out.numel() / inner : 0;
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t oa = 0, ob = 0, rem = r;
      for (int64_t k = n - 2; k >= 0; --k) {
        int64_t i = rem % shape[k];
        rem /= shape[k];
        oa += i * sa[k];
        ob += i * sb[k];
      }
      const float* x = pa + oa;
      const float* y = pb + ob;
      float* z = po + r * inner;
      switch (op) {
        case BinOp::add: for (int64_t i = 0; i < inner; ++i) z[i] = x[i * ia] + y[i * ib]; break;
        case BinOp::sub: for (int64_t i = 0; i < inner; ++i) z[i] = x[i * ia] - y[i * ib]; break;
        case BinOp::mul: for (int64_t i = 0; i < inner; ++i) z[i] = x[i * ia] * y[i * ib]; break;
        case BinOp::div: for (int64_t i = 0; i < inner; ++i) z[i] = x[i * ia] / y[i * ib]; break;
      }
    }
  });
  return out;
}

Var binary(const Var& a, const Var& b, BinOp op) {
  Tensor av = a.value(), bv = b.value();
  Tensor out = binary_forward(av, bv, op);
  bool grad = needs_grad({&a, &b});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([a, b, y, op]() mutable {
    if (!y.grad().defined()) return;
    const Tensor& gy = y.grad();
    switch (op) {
      // d(a+b) = da + db
      case BinOp::add:
        if (a.requires_grad()) a.accumulate_grad(sum_to_shape(gy, a.shape()));
        if (b.requires_grad()) b.accumulate_grad(sum_to_shape(gy, b.shape()));
        break;
      // d(a-b) = da - db
      case BinOp::sub:
        if (a.requires_grad()) a.accumulate_grad(sum_to_shape(gy, a.shape()));
        if (b.requires_grad()) {
          Tensor neg = binary_forward(Tensor::full({}, 0.0f), gy, BinOp::sub);
          b.accumulate_grad(sum_to_shape(neg, b.shape()));
        }
        break;
      // d(a*b) = b da + a db
      case BinOp::mul:
        if (a.requires_grad()) a.accumulate_grad(sum_to_shape(binary_forward(gy, b.value(), BinOp::mul), a.shape()));
        if (b.requires_grad()) b.accumulate_grad(sum_to_shape(binary_forward(gy, a.value(), BinOp::mul), b.shape()));
        break;
      // d(a/b) = da / b - a db / b^2
      case BinOp::div:
        if (a.requires_grad()) a.accumulate_grad(sum_to_shape(binary_forward(gy, b.value(), BinOp::div), a.shape()));
        if (b.requires_grad()) {
          Tensor q = binary_forward(y.value(), b.value(), BinOp::div);       // a / b^2
          Tensor gb = binary_forward(binary_forward(Tensor::full({}, 0.0f), gy, BinOp::sub), q, BinOp::mul);
          b.accumulate_grad(sum_to_shape(gb, b.shape()));
        }
        break;
    }
  });
  return y;
}

// y = f(x) element by element; backward gx = gy * f'(x) with f' given from x and y.
template <typename F, typename DF>
Var unary(const Var& x, F f, DF df) {
  Tensor xv = x.value().contiguous();
  Tensor out = Tensor::empty(xv.shape());
  const float* px = xv.data<float>();
  float* py = out.data<float>();
  parallel_for(xv.numel(), 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) py[i] = f(px[i]);
  });
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, xv, y, df]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(xv.shape());
    const float* pgy = gy.data<float>();
    const float* px = xv.data<float>();
    const float* py = y.value().data<float>();
    float* pgx = gx.data<float>();
    parallel_for(xv.numel(), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) pgx[i] = pgy[i] * df(px[i], py[i]);
    });
    detail::give_grad(x, std::move(gx));
  });
  return y;
}

}  // namespace

Var add(const Var& a, const Var& b) { return binary(a, b, BinOp::add); }
Var sub(const Var& a, const Var& b) { return binary(a, b, BinOp::sub); }
Var mul(const Var& a, const Var& b) { return binary(a, b, BinOp::mul); }
Var div(const Var& a, const Var& b) { return binary(a, b, BinOp::div); }

// y = s x;  dx = s dy
Var scale(const Var& x, float s) {
  return unary(x, [s](float v) { return s * v; }, [s](float, float) { return s; });
}

// y = max(0, x);  dx = dy [x > 0]
Var relu(const Var& x) {
  return unary(x, [](float v) { return v > 0.0f ? v : 0.0f; },
               [](float v, float) { return v > 0.0f ? 1.0f : 0.0f; });
}

// y = x Phi(x) = x/2 (1 + erf(x/sqrt 2));  dx = dy (Phi(x) + x phi(x))
Var gelu(const Var& x) {
  return unary(
      x, [](float v) { return 0.5f * v * (1.0f + std::erf(v * static_cast<float>(M_SQRT1_2))); },
      [](float v, float) {
        float cdf = 0.5f * (1.0f + std::erf(v * static_cast<float>(M_SQRT1_2)));
        float pdf = std::exp(-0.5f * v * v) * static_cast<float>(0.5 * M_2_SQRTPI * M_SQRT1_2);
        return cdf + v * pdf;
      });
}

// y = x s(x), s = 1/(1+e^-x);  dx = dy s(x) (1 + x (1 - s(x)))
Var swish(const Var& x) {
  return unary(
      x, [](float v) { return v / (1.0f + std::exp(-v)); },
      [](float v, float) {
        const float s = 1.0f / (1.0f + std::exp(-v));
        return s * (1.0f + v * (1.0f - s));
      });
}

// y = tanh(x);  dx = dy (1 - y^2)
Var tanh(const Var& x) {
  return unary(x, [](float v) { return std::tanh(v); }, [](float, float y) { return 1.0f - y * y; });
}

// y = 1/(1+e^-x);  dx = dy y (1 - y)
Var sigmoid(const Var& x) {
  return unary(x, [](float v) { return 1.0f / (1.0f + std::exp(-v)); },
               [](float, float y) { return y * (1.0f - y); });
}

// y = mask ? value : x;  dx = mask ? 0 : dy
Var masked_fill(const Var& x, const Tensor& mask, float value) {
  Tensor xv = x.value().contiguous();
  const Shape& shape = xv.shape();
  if (!(broadcast_shapes(mask.shape(), shape) == shape))
    fail("masked_fill: mask ",
        shape_str(mask.shape()), " does not broadcast to ", shape_str(shape));
  Tensor m = Tensor::empty(shape);  // mask as 0/1 floats in x's shape
  {
    Tensor mf = mask;
    if (mask.dtype() == DType::i32) {
      Tensor c = mask.contiguous();
      mf = Tensor::empty(mask.shape());
      const int32_t* src = c.data<int32_t>();
      float* dst = mf.data<float>();
      for (int64_t i = 0; i < c.numel(); ++i) dst[i] = src[i] != 0;
    }
    Tensor bm = binary_forward(Tensor::zeros(shape), mf, BinOp::add);
    m = bm;
  }
  Tensor out = Tensor::empty(shape);
  const float* pm = m.data<float>();
  const float* px = xv.data<float>();
  float* py = out.data<float>();
  for (int64_t i = 0; i < xv.numel(); ++i) py[i] = pm[i] != 0.0f ? value : px[i];
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, y, m]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(gy.shape());
    const float* pm = m.data<float>();
    const float* pg = gy.data<float>();
    float* px = gx.data<float>();
    for (int64_t i = 0; i < gy.numel(); ++i) px[i] = pm[i] != 0.0f ? 0.0f : pg[i];
    detail::give_grad(x, std::move(gx));
  });
  return y;
}

}  // namespace attn
