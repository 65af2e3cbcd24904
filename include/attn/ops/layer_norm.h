// Layer normalisation (Ba et al. 2016) over the last dimension, fused: one pass for the
// statistics, one for the output; the biased variance and eps = 1e-5, as PyTorch's nn.LayerNorm.
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

// LN(x) = gamma * (x - mean) / sqrt(var + eps) + beta
Var layer_norm(const Var& x, const Var& gamma, const Var& beta, float eps = 1e-5f);

}  // namespace attn
