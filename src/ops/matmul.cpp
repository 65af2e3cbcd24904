#include "attn/ops/matmul.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"
#include "affine.h"
#include "grad_target.h"

namespace attn {
namespace {

struct MatmulDims {
  int64_t batch, m, k, n;
  bool b_shared;  // b is 2-D and used by every batch item
};

MatmulDims matmul_dims(const Shape& a, const Shape& b, bool ta, bool tb) {
  if (!(a.size() >= 2 && b.size() >= 2))
    fail("matmul: operands need 2 or more dimensions, got ",
        shape_str(a), " and ", shape_str(b));
  MatmulDims d{};
  d.m = ta ? a[a.size() - 1] : a[a.size() - 2];
  d.k = ta ? a[a.size() - 2] : a[a.size() - 1];
  int64_t kb = tb ? b[b.size() - 1] : b[b.size() - 2];
  d.n = tb ? b[b.size() - 2] : b[b.size() - 1];
  if (!(d.k == kb))
    fail("matmul: inner dimensions differ: ", shape_str(a), (ta ? "^T" : ""), " x ",
        shape_str(b), (tb ? "^T" : ""));
  d.batch = shape_numel(a) / (d.m * d.k == 0 ? 1 : d.m * d.k);
  if (d.m * d.k == 0) d.batch = shape_numel(Shape(a.begin(), a.end() - 2));
  d.b_shared = b.size() == 2;
  if (!d.b_shared) {
    if (!(Shape(a.begin(), a.end() - 2) == Shape(b.begin(), b.end() - 2)))
      fail("matmul: batch dimensions differ: ", shape_str(a), " and ", shape_str(b));
  }
  return d;
}

// C (+)= op(A) op(B) for each of `batch` items; op(A) is [m, k], op(B) is [k, n], all dense.
// An operand with stride 0 is shared by every item.
void product(const float* A, const float* B, float* C, int64_t batch, int64_t m, int64_t k,
             int64_t n, bool ta, bool tb, float beta, int64_t stride_a, int64_t stride_b) {
  GemmArgs g{ta, tb, m, n, k, 1.0f, beta, A, ta ? m : k, B, tb ? k : n, C, n};
  if (batch == 1) return gemm(g);
  gemm_batched(g, batch, stride_a, stride_b, m * n);
}

// The same over bf16 operands (f32 accumulation and C), one gemm_bf16 per item.
void product(const uint16_t* A, const uint16_t* B, float* C, int64_t batch, int64_t m, int64_t k,
             int64_t n, bool ta, bool tb, float beta, int64_t stride_a, int64_t stride_b) {
  for (int64_t i = 0; i < batch; ++i)
    gemm_bf16(GemmBf16Args{ta, tb, m, n, k, 1.0f, beta, A + i * stride_a, ta ? m : k,
                           B + i * stride_b, tb ? k : n, C + i * m * n, n});
}

// dA and dB of C = op(A) op(B) from G = dC; T is float, or uint16_t for bf16 operands.
template <typename T>
void matmul_backward(const Var& a, const Var& b, const T* A, const T* B, const T* G,
                     const MatmulDims& d, bool trans_a, bool trans_b) {
  int64_t sa = d.m * d.k, sb = d.b_shared ? 0 : d.k * d.n, sg = d.m * d.n;
  bool fold = d.b_shared && !trans_a;  // A and dC read as [batch*m, .] matrices
  int64_t batch = fold ? 1 : d.batch, m = fold ? d.batch * d.m : d.m;
  if (a.requires_grad()) {
    float* gA = a.grad_buffer().data<float>();
    if (!trans_a)  // dA = dC op(B)^T : [m, n] x [n, k]
      product(G, B, gA, batch, m, d.n, d.k, false, !trans_b, 1.0f, sg, sb);
    else           // dA = op(B) dC^T : [k, n] x [n, m]
      product(B, G, gA, batch, d.k, d.n, m, trans_b, true, 1.0f, sb, sg);
  }
  if (b.requires_grad()) {
    float* gB = b.grad_buffer().data<float>();
    // A shared B gathers the products of every item: one call per item when not folded.
    int64_t items = d.b_shared ? batch : 1, inner = d.b_shared ? 1 : batch;
    for (int64_t i = 0; i < items; ++i) {
      const T* Ai = A + i * sa;
      const T* Gi = G + i * sg;
      if (!trans_b)  // dB = op(A)^T dC : [k, m] x [m, n]
        product(Ai, Gi, gB, inner, d.k, m, d.n, !trans_a, false, 1.0f, sa, sg);
      else           // dB = dC^T op(A) : [n, m] x [m, k]
        product(Gi, Ai, gB, inner, d.n, m, d.k, true, trans_a, 1.0f, sg, sa);
    }
  }
}

// The forward product of matmul() over T operands (see matmul_backward).
template <typename T>
void matmul_forward(const T* A, const T* B, float* C, const MatmulDims& d, bool trans_a, bool trans_b) {
  int64_t sa = d.m * d.k, sb = d.b_shared ? 0 : d.k * d.n;
  if (d.b_shared && !trans_a) {
    // Fold the batch into the rows: one [batch*m, k] x [k, n] product.
    product(A, B, C, 1, d.batch * d.m, d.k, d.n, false, trans_b, 0.0f, 0, 0);
  } else {
    product(A, B, C, d.batch, d.m, d.k, d.n, trans_a, trans_b, 0.0f, sa, sb);
  }
}

}  // namespace

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b, Precision precision) {
  Tensor av = a.value().contiguous(), bv = b.value().contiguous();
  MatmulDims d = matmul_dims(av.shape(), bv.shape(), trans_a, trans_b);
  Shape out_shape(av.shape().begin(), av.shape().end() - 2);
  out_shape.push_back(d.m);
  out_shape.push_back(d.n);
  Tensor out = Tensor::empty(out_shape);
  bool grad = needs_grad({&a, &b});
  // bf16: both operands rounded once, the copies kept for the backward. int8 applies to the
  // weights of linear layers only: products of activations stay f32 (as in CTranslate2).
  if (precision == Precision::bf16) {
    Tensor a16 = detail::round_operand(av), b16 = detail::round_operand(bv);
    if (a16.dtype() == DType::bf16)
      matmul_forward(a16.data<uint16_t>(), b16.data<uint16_t>(), out.data<float>(), d, trans_a, trans_b);
    else
      matmul_forward(a16.data<float>(), b16.data<float>(), out.data<float>(), d, trans_a, trans_b);
    Var y = make_output(out, grad);
    if (!grad) return y;
    record_backward([a, b, a16, b16, y, d, trans_a, trans_b]() mutable {
      if (!y.grad().defined()) return;
      Tensor g16 = detail::round_operand(y.grad().contiguous());
      if (g16.dtype() == DType::bf16)
        matmul_backward(a, b, a16.data<uint16_t>(), b16.data<uint16_t>(), g16.data<uint16_t>(), d, trans_a,
                        trans_b);
      else
        matmul_backward(a, b, a16.data<float>(), b16.data<float>(), g16.data<float>(), d, trans_a, trans_b);
    });
    return y;
  }
  matmul_forward(av.data<float>(), bv.data<float>(), out.data<float>(), d, trans_a, trans_b);
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([a, b, av, bv, y, d, trans_a, trans_b]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    matmul_backward(a, b, av.data<float>(), bv.data<float>(), gy.data<float>(), d, trans_a, trans_b);
  });
  return y;
}

Var linear(const Var& x, const Var& W, const Var& b, const WeightForm& form) {
  bool grad = needs_grad({&x, &W, &b});
  detail::Affine a = detail::affine_forward(x, W, b, form, grad);
  Var y = make_output(a.out, grad);
  if (!grad) return y;
  a.out = Tensor();  // the backward does not need the output
  record_backward([x, W, b, a, y]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    detail::affine_backward(x, W, b, a, gy.data<float>());
  });
  return y;
}

Var linear_relu(const Var& x, const Var& W, const Var& b, const WeightForm& form) {
  bool grad = needs_grad({&x, &W, &b});
  detail::Affine a = detail::affine_forward(x, W, b, form, grad);
  // h = max(0, x W^T + b), in place
  float* h = a.out.data<float>();
  parallel_for(a.out.numel(), 1 << 14, [h](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) h[i] = h[i] > 0.0f ? h[i] : 0.0f;
  });
  Var y = make_output(a.out, grad);
  if (!grad) return y;
  a.out = Tensor();
  // d(xW^T + b) = dh [h > 0], then as linear
  record_backward([x, W, b, a, y]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor g = Tensor::empty(gy.shape());
    const float* pg = gy.data<float>();
    const float* ph = y.value().data<float>();
    float* pd = g.data<float>();
    parallel_for(g.numel(), 1 << 14, [pd, ph, pg](int64_t i0, int64_t i1) {
      const float* __restrict hh = ph;
      const float* __restrict gg = pg;
      float* __restrict dd = pd;
      for (int64_t i = i0; i < i1; ++i) dd[i] = hh[i] > 0.0f ? gg[i] : 0.0f;
    });
    detail::affine_backward(x, W, b, a, pd);
  });
  return y;
}

}  // namespace attn
