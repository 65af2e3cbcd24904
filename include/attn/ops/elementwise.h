// Element-wise differentiable ops. Binary ops broadcast as NumPy and PyTorch do; the gradient
// of a broadcast operand is summed back to its shape.
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

Var add(const Var& a, const Var& b);  // a + b
Var sub(const Var& a, const Var& b);  // a - b
Var mul(const Var& a, const Var& b);  // a * b
Var div(const Var& a, const Var& b);  // a / b
Var scale(const Var& x, float s);     // s * x

// max(0, x)
Var relu(const Var& x);
// x * Phi(x), Phi the standard normal CDF (the exact erf form, PyTorch's default)
Var gelu(const Var& x);
Var swish(const Var& x);  // x sigmoid(x), PyTorch's SiLU
// tanh(x)
Var tanh(const Var& x);
// 1 / (1 + exp(-x))
Var sigmoid(const Var& x);

// x where mask == 0, value where mask != 0; mask (f32 or i32) broadcasts to x.
Var masked_fill(const Var& x, const Tensor& mask, float value);

}  // namespace attn
