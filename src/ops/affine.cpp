#include "affine.h"
#include "column_sums.h"

#include "attn/error.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/linear.h"
#include "attn/kernels/precision.h"
#include "weight_forms.h"
#include "grad_target.h"

namespace attn::detail {
namespace {

// The frozen form of an inference product whose weight is W (its shape checked), or null: a
// trained weight, or a product that will be differentiated.
const FrozenWeight* frozen_for(const WeightForm& form, const Affine& a, bool grad) {
  const FrozenWeight* f = grad ? nullptr : form.frozen.get();
  if (f && !(f->out == a.out_features && f->in == a.in))
    fail("linear: the weight's inference form is [", f->out, ", ", f->in, "], the weight ", shape_str(a.wv.shape()));
  return f;
}

// y = x W^T + bias (null: none) in the form's precision, by the product kernels/ plans and runs
// (kernels/linear.h): which kernel, on which of W's forms, the bias in its epilogue or in y first.
// `grad`: a backward will follow (bf16 keeps its rounded operands for it; int8 refuses).
void affine_product(Affine& a, const WeightForm& form, const FrozenWeight* frozen, bool grad, const float* bias) {
  const Precision p = form.precision;
  if (p == Precision::int8 && grad)
    fail("linear: int8 is for inference only; weight ", shape_str(a.wv.shape()), " needs a gradient");
  LinearArgs g{p, a.rows, a.out_features, a.in, a.xv.data<float>(), a.wv.data<float>(), a.out.data<float>(), bias,
               frozen ? &frozen->forms : nullptr};
  if (p == Precision::bf16 && !frozen) {  // training in bf16: the rounded operands, kept for the backward
    a.x16 = round_operand(a.xv);
    a.w16 = round_operand(a.wv);
    g.x_rounded = a.x16.raw_data();
    g.w_rounded = a.w16.raw_data();
  }
  linear_forward(g);
}

// db[j] += sum over rows of G  [rows, n]: fixed blocks of rows, the same value for any thread count
// (column_sums.h).
void add_bias_gradient(const float* G, int64_t rows, int64_t n, float* db) {
  add_column_sums(rows, n, db, [G, n](int64_t r0, int64_t r1, float* acc) {
    float* __restrict s = acc;
    for (int64_t r = r0; r < r1; ++r) {
      const float* __restrict g = G + r * n;
      for (int64_t j = 0; j < n; ++j) s[j] += g[j];
    }
  });
}

// round_operand(G) and add_bias_gradient(G) in one pass over G, which for the output layer is the
// largest matrix of the step ([tokens, vocabulary]).
Tensor round_operand_and_bias_gradient(const float* G, int64_t rows, int64_t n, float* db) {
  const bool raw = rounded_bf16_operands() == OperandType::bf16;
  Tensor out = Tensor::empty({rows, n}, raw ? DType::bf16 : DType::f32);
  uint16_t* o16 = raw ? out.data<uint16_t>() : nullptr;
  float* o32 = raw ? nullptr : out.data<float>();
  add_column_sums(rows, n, db, [=](int64_t r0, int64_t r1, float* acc) {
    float* __restrict s = acc;
    for (int64_t r = r0; r < r1; ++r) {
      const float* __restrict g = G + r * n;
      for (int64_t j = 0; j < n; ++j) s[j] += g[j];
      if (raw) {
        for (int64_t j = 0; j < n; ++j) o16[r * n + j] = float_to_bf16(g[j]);
      } else {
        for (int64_t j = 0; j < n; ++j) o32[r * n + j] = bf16_to_float(float_to_bf16(g[j]));
      }
    }
  });
  return out;
}

// dx = dy W;  dW = dy^T x  in bf16: dy rounded once (g16), x and W as the forward rounded them.
void affine_backward_bf16(const Var& x, const Var& W, const Affine& a, const Tensor& g16) {
  float beta = 0.0f;
  if (x.requires_grad()) {
    float* gx = detail::grad_target(x, &beta);
    gemm_rounded(false, false, a.rows, a.in, a.out_features, beta, g16, a.out_features, a.w16, a.in, gx, a.in);
  }
  if (W.requires_grad()) {
    float* gW = detail::grad_target(W, &beta);
    gemm_rounded(true, false, a.out_features, a.in, a.rows, beta, g16, a.out_features, a.x16, a.in, gW, a.in);
  }
}

}  // namespace

Tensor round_operand(const float* src, const Shape& shape) {
  if (rounded_bf16_operands() == OperandType::bf16) {
    Tensor out = Tensor::empty(shape, DType::bf16);
    round_to_bf16(src, out.data<uint16_t>(), out.numel());
    return out;
  }
  Tensor out = Tensor::empty(shape);
  round_through_bf16(src, out.data<float>(), out.numel());
  return out;
}

Tensor round_operand(const Tensor& t) { return round_operand(t.data<float>(), t.shape()); }

void gemm_rounded(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float beta, const Tensor& A,
                  int64_t lda, const Tensor& B, int64_t ldb, float* C, int64_t ldc, const float* bias) {
  check(A.dtype() == B.dtype(), "gemm_rounded: operands of different dtypes");
  check(!bias || A.dtype() == DType::bf16, "gemm_rounded: a bias needs bf16 operands (attn::gemm has no epilogue)");
  if (A.dtype() == DType::bf16)
    return gemm_bf16(GemmBf16Args{trans_a, trans_b, m, n, k, 1.0f, beta, A.data<uint16_t>(), lda,
                                  B.data<uint16_t>(), ldb, C, ldc, bias});
  gemm({trans_a, trans_b, m, n, k, 1.0f, beta, A.data<float>(), lda, B.data<float>(), ldb, C, ldc});
}

Affine affine_forward(const Var& x, const Var& W, const Var& b, const WeightForm& form, bool grad) {
  Affine a;
  a.xv = x.value().contiguous();
  a.wv = W.value().contiguous();
  a.in = a.wv.size(1);
  a.out_features = a.wv.size(0);
  if (!(a.xv.size(-1) == a.in))
    fail("linear: input ", shape_str(a.xv.shape()), " does not match weight ", shape_str(a.wv.shape()));
  a.rows = a.xv.numel() / a.in;
  Shape out_shape = a.xv.shape();
  out_shape.back() = a.out_features;
  a.out = Tensor::empty(out_shape);
  const FrozenWeight* frozen = frozen_for(form, a, grad);
  Tensor bv;
  if (b.defined()) {
    if (!(b.value().numel() == a.out_features))
      fail("linear: bias ", shape_str(b.shape()), " does not match weight ", shape_str(a.wv.shape()));
    bv = b.value().contiguous();
  }
  // y = x W^T + b
  affine_product(a, form, frozen, grad, b.defined() ? bv.data<float>() : nullptr);
  return a;
}

// dx = dy W;  dW = dy^T x;  db = sum over rows of dy  (G: dy as [rows, out], dense)
void affine_backward(const Var& x, const Var& W, const Var& b, const Affine& a, const float* G) {
  float beta = 0.0f;
  const bool bias_grad = b.defined() && b.requires_grad();
  if (a.w16.defined()) {
    const int64_t n = a.out_features;
    const Tensor g16 = bias_grad ? round_operand_and_bias_gradient(G, a.rows, n, b.grad_buffer().data<float>())
                                 : round_operand(G, {a.rows, n});
    affine_backward_bf16(x, W, a, g16);
  } else {
    if (x.requires_grad()) {
      float* gx = detail::grad_target(x, &beta);
      gemm({false, false, a.rows, a.in, a.out_features, 1.0f, beta, G, a.out_features, a.wv.data<float>(),
            a.in, gx, a.in});
    }
    if (W.requires_grad()) {
      float* gW = detail::grad_target(W, &beta);
      gemm({true, false, a.out_features, a.in, a.rows, 1.0f, beta, G, a.out_features, a.xv.data<float>(),
            a.in, gW, a.in});
    }
    if (bias_grad) add_bias_gradient(G, a.rows, a.out_features, b.grad_buffer().data<float>());
  }
}

}  // namespace attn::detail
