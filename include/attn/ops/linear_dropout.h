// A linear layer with its activation and dropout fused after the product, for training:
// Dropout(act(x W^T + b)), act the identity or ReLU. The product runs without the bias; one pass
// then adds the bias, applies the ReLU and dropout, and keeps one mask bit per element. The
// backward makes dz = dy m (the mask times [z > 0] with ReLU) and the bias gradient's column sums
// in one pass, then the two products of a linear layer.
#pragma once

#include "attn/autodiff/var.h"
#include "attn/ops/weight_form.h"
#include "attn/tensor/random.h"

namespace attn {

// The mask takes the same stream numbers as dropout(linear(x, W, b), p, rng, training) (or with
// relu, relu_dropout), in the same order, so the result equals the unfused ops' up to the rounding
// of the bias (added after the product instead of before). Not training or p == 0: linear, or
// linear_relu.
// The product runs as W's form says (fp32 or bf16: this op is for training).
Var linear_dropout(const Var& x, const Var& W, const Var& b, bool relu, float p, Rng& rng, bool training,
                   const WeightForm& form = {});

}  // namespace attn
