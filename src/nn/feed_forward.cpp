#include "attn/nn/feed_forward.h"

namespace attn {

Var forward(const FeedForward& f, const Var& x, const Context& ctx) {
  // h = max(0, x W_1 + b_1)                                    [batch, len, d_ff]
  Var h = f.gelu ? gelu(forward(f.linear1, x)) : linear_relu(x, f.linear1.W, f.linear1.b);
  // FFN(x) = h W_2 + b_2                                       [batch, len, d_model]
  return forward(f.linear2, apply_dropout(h, ctx));
}

}  // namespace attn
