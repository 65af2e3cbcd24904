// Private to src/ops: the affine map y = x W^T + b of linear layers, its product in the weight's
// form's precision (fp32, bf16 with rounded operands kept for the backward, or int8 / packed weights in
// inference) and its backward; shared by linear, linear_relu (matmul.cpp) and linear_dropout.
#pragma once

#include <cstdint>

#include "attn/autodiff/var.h"
#include "attn/ops/weight_form.h"

namespace attn::detail {

// x W^T + b for x [..., in], W [out, in]: the value and what the backward needs.
struct Affine {
  Tensor xv, wv, out;
  Tensor x16, w16;  // xv and wv rounded to bf16 (round_operand) when the product ran in bf16, else undefined
  int64_t rows = 0, in = 0, out_features = 0;
};

// y = x W^T (+ b when b is defined: the bias is written first and the product adds to it).
// The product runs as `form` says (ops/weight_form.h). `grad`: a backward will follow.
Affine affine_forward(const Var& x, const Var& W, const Var& b, const WeightForm& form, bool grad);

// dx = dy W;  dW = dy^T x;  db = sum over rows of dy when b is defined (G: dy as [rows, out], dense)
void affine_backward(const Var& x, const Var& W, const Var& b, const Affine& a, const float* G);

// A dense f32 tensor rounded to bf16 for products in bf16 (the reduced-precision copy of an
// operand, kept for the backward): raw bf16 (DType::bf16) where oneDNN multiplies bf16, else the
// same bf16 values stored as f32 (DType::f32), which attn::gemm multiplies as they are, where
// bf16 operands would be widened for every product (AVX2 CPUs).
Tensor round_operand(const Tensor& t);
Tensor round_operand(const float* src, const Shape& shape);

// C = op(A) op(B) + beta C over two round_operand() results (of the same dtype), f32 C; with a
// bias (n floats; raw bf16 operands, beta 0): C = op(A) op(B) + bias on every row.
void gemm_rounded(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float beta, const Tensor& A,
                  int64_t lda, const Tensor& B, int64_t ldb, float* C, int64_t ldc, const float* bias = nullptr);

}  // namespace attn::detail
