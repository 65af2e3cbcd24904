#include "affine.h"
#include "column_sums.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_panels.h"
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

// fp32 inference on W packed once (panels, or oneDNN's layout), whose product adds the bias in its
// epilogue.
bool on_f32_packed(const WeightForm& form, const FrozenWeight* frozen, int64_t rows) {
  return form.precision == Precision::fp32 && frozen && f32_packed_for(rows);
}

// int8 inference, bf16 products of rounded operands through oneDNN's bf16 matmul (its bias: one
// pass over y fewer), and fp32 inference on a packed W add the bias in the product's epilogue;
// otherwise y starts as the bias.
bool bias_in_epilogue(const WeightForm& form, const FrozenWeight* frozen, bool grad, int64_t rows) {
  const bool bf16_matmul =
      form.precision == Precision::bf16 && !frozen && rounded_bf16_kernel() == Kernel::onednn_bf16;
  return (form.precision == Precision::int8 && !grad) || bf16_matmul || on_f32_packed(form, frozen, rows);
}

// y (+)= x W^T in the form's precision (y holds the bias when beta == 1; where bias_in_epilogue,
// `bias` goes into the product's epilogue instead, beta 0). `grad`: a backward will follow (bf16
// keeps its rounded operands for it; int8 refuses).
void affine_product(Affine& a, const WeightForm& form, const FrozenWeight* frozen, float beta, bool grad,
                    const float* bias) {
  const Precision p = form.precision;
  PackedGemmArgs g{a.rows, a.xv.data<float>(), a.in, beta, a.out.data<float>(), a.out_features};
  g.bias = bias;
  if (on_f32_packed(form, frozen, a.rows)) return gemm_packed(g, frozen->f32_packed());
  if (p == Precision::fp32) {
    gemm({false, true, a.rows, a.out_features, a.in, 1.0f, beta, a.xv.data<float>(), a.in,
          a.wv.data<float>(), a.in, a.out.data<float>(), a.out_features});
    return;
  }
  if (!(p != Precision::int8 || !grad))
    fail("linear: int8 is for inference only; weight ", shape_str(a.wv.shape()), " needs a gradient");
  if (frozen) return gemm_packed(g, *frozen->packed);
  if (p == Precision::int8) {  // a weight not frozen for inference: quantized for this call
    return gemm_packed(g, *pack_weight(p, a.wv.data<float>(), a.out_features, a.in, a.in));
  }
  a.x16 = round_operand(a.xv);
  a.w16 = round_operand(a.wv);
  gemm_rounded(false, true, a.rows, a.out_features, a.in, beta, a.x16, a.in, a.w16, a.in, a.out.data<float>(),
               a.out_features, bias);
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
  const bool raw = rounded_bf16_kernel() == Kernel::onednn_bf16;
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
  if (rounded_bf16_kernel() == Kernel::onednn_bf16) {
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
  float beta = 0.0f;
  Tensor bv;
  const FrozenWeight* frozen = frozen_for(form, a, grad);
  const bool epilogue = b.defined() && bias_in_epilogue(form, frozen, grad, a.rows);
  if (b.defined()) {
    if (!(b.value().numel() == a.out_features))
      fail("linear: bias ", shape_str(b.shape()), " does not match weight ", shape_str(a.wv.shape()));
    bv = b.value().contiguous();
  }
  if (b.defined() && !epilogue) {
    const float* pb = bv.data<float>();
    float* po = a.out.data<float>();
    int64_t n = a.out_features;
    parallel_for(a.rows, std::max<int64_t>(1, 16384 / n), [pb, po, n](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) std::copy(pb, pb + n, po + r * n);
    });
    beta = 1.0f;
  }
  // y = x W^T + b
  affine_product(a, form, frozen, beta, grad, epilogue ? bv.data<float>() : nullptr);
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
