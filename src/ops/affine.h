// Private to src/ops: the affine map y = x W^T + b of linear layers, its product in the current
// precision (fp32, bf16 with rounded operands kept for the backward, or int8 / packed weights in
// inference) and its backward; shared by linear, linear_relu (matmul.cpp) and linear_dropout.
#pragma once

#include <cstdint>

#include "attn/autodiff/var.h"

namespace attn::detail {

// x W^T + b for x [..., in], W [out, in]: the value and what the backward needs.
struct Affine {
  Tensor xv, wv, out;
  Tensor x16, w16;  // bf16 copies of xv and wv when the product ran in bf16 (else undefined)
  int64_t rows = 0, in = 0, out_features = 0;
};

// y = x W^T (+ b when b is defined: the bias is written first and the product adds to it).
// `grad`: a backward will follow.
Affine affine_forward(const Var& x, const Var& W, const Var& b, bool grad);

// dx = dy W;  dW = dy^T x;  db = sum over rows of dy when b is defined (G: dy as [rows, out], dense)
void affine_backward(const Var& x, const Var& W, const Var& b, const Affine& a, const float* G);

// A dense f32 tensor rounded to bf16 (the reduced-precision copy of an operand).
Tensor to_bf16(const Tensor& t);

}  // namespace attn::detail
