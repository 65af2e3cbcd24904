// Private to src/ops: the affine map y = x W^T + b of linear layers, its product in the current
// precision (fp32, bf16 with rounded operands kept for the backward, or int8 / packed weights in
// inference) and its backward; shared by linear, linear_relu (matmul.cpp) and linear_dropout.
#pragma once

#include <cstdint>
#include <functional>

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

// db[j] += sum over rows of a [rows, n] matrix, formed in fixed blocks of rows: body(r0, r1, acc)
// adds rows [r0, r1) into acc (n floats, zero on entry), blocks run in parallel, and their sums
// are added to db in block order, so the value is the same for any thread count.
void add_column_sums(int64_t rows, int64_t n, float* db,
                     const std::function<void(int64_t r0, int64_t r1, float* acc)>& body);

// A dense f32 tensor rounded to bf16 (the reduced-precision copy of an operand).
Tensor to_bf16(const Tensor& t);

}  // namespace attn::detail
