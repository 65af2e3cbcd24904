// The residual connection and layer norm of a post-LN sub-layer, fused (Transformer §3.1:
// LayerNorm(x + Sublayer(x))). Implemented beside layer_norm in src/ops/layer_norm.cpp.
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

// LN(a + b), a and b of one shape: the values of layer_norm(add(a, b), gamma, beta, eps) in one
// pass; the sum is not stored, and the backward writes dLN straight into the gradients of both
// a and b (where add()'s backward would copy it twice).
Var add_layer_norm(const Var& a, const Var& b, const Var& gamma, const Var& beta, float eps = 1e-5f);

}  // namespace attn
