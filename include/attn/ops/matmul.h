// Matrix products: the one place where attn's FLOPs are spent. Both go through gemm().
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

// op(a) op(b), op(X) = X or X^T on the last two dimensions.
// a: [..., m, k] (or [..., k, m] with trans_a); b: [k, n] (shared by every batch item) or
// [..., k, n] with the same leading dimensions as a. Result: [..., m, n].
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);

// y = x W^T + b, PyTorch's nn.Linear: x [..., in], W [out, in], b [out] (may be undefined).
Var linear(const Var& x, const Var& W, const Var& b);
// max(0, x W^T + b), the FFN's first layer in one op: the ReLU is applied in place on the product
// and its mask read back from the output in the backward.
Var linear_relu(const Var& x, const Var& W, const Var& b);

}  // namespace attn
