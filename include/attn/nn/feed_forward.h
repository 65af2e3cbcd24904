// Position-wise feed-forward network (§3.3): FFN(x) = max(0, x W_1 + b_1) W_2 + b_2,
// with GELU or swish in place of ReLU as an option (nn/activation.h), and dropout on the inner
// activation (where PyTorch's nn.TransformerEncoderLayer puts it).
#pragma once

#include <string>

#include "attn/nn/activation.h"
#include "attn/nn/layers.h"

namespace attn {

struct FeedForward {
  Linear linear1;  // d_model -> d_ff
  Linear linear2;  // d_ff -> d_model
  Activation activation = Activation::relu;
};

Var forward(const FeedForward& f, const Var& x, const Context& ctx);
// Fixes how f's products run: precision p, for training or (frozen weights) inference.
void prepare(FeedForward& f, Precision p, Use use);

}  // namespace attn
