// Matrix products: the one place where attn's FLOPs are spent. Both go through gemm().
#pragma once

#include "attn/autodiff/var.h"
#include "attn/kernels/precision.h"
#include "attn/ops/weight_form.h"

namespace attn {

// op(a) op(b), op(X) = X or X^T on the last two dimensions.
// a: [..., m, k] (or [..., k, m] with trans_a); b: [k, n] (shared by every batch item) or
// [..., k, n] with the same leading dimensions as a. Result: [..., m, n].
// In bf16 both operands are rounded once, the copies kept for the backward; int8 applies to the
// weights of linear layers only: products of activations stay f32 (as in CTranslate2).
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false,
           Precision precision = Precision::fp32);

// y = x W^T + b, PyTorch's nn.Linear: x [..., in], W [out, in], b [out] (may be undefined).
// The product runs as W's form says (its precision; for inference, W converted once).
Var linear(const Var& x, const Var& W, const Var& b, const WeightForm& form = {});
// max(0, x W^T + b), the FFN's first layer in one op: the ReLU is applied in place on the product
// and its mask read back from the output in the backward.
Var linear_relu(const Var& x, const Var& W, const Var& b, const WeightForm& form = {});

}  // namespace attn
