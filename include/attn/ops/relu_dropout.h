// ReLU and dropout fused, for the feed-forward network's inner activation (dropout(max(0, x))).
// Implemented beside dropout in src/ops/dropout.cpp.
#pragma once

#include "attn/autodiff/var.h"
#include "attn/tensor/random.h"

namespace attn {

// dropout(relu(x), p, rng, training) with the same values, mask and stream positions as the two
// ops in turn, in one pass forward and one backward (one saved bit an element: the mask times
// [x > 0]).
// relu(x) when not training or p == 0.
Var relu_dropout(const Var& x, float p, Rng& rng, bool training);

}  // namespace attn
