#include "attn/nn/feed_forward.h"

#include "attn/ops/linear_dropout.h"

namespace attn {

void prepare(FeedForward& f, Precision p, Use use) {
  prepare(f.linear1, p, use);
  prepare(f.linear2, p, use);
}

Var forward(const FeedForward& f, const Var& x, const Context& ctx) {
  // h = max(0, x W_1 + b_1), or GELU(x W_1 + b_1), or swish     [batch, len, d_ff]
  Var h;
  if (f.activation == Activation::gelu)
    h = apply_dropout(gelu(forward(f.linear1, x)), ctx);
  else if (f.activation == Activation::swish)
    h = apply_dropout(swish(forward(f.linear1, x)), ctx);
  else if (ctx.training && ctx.dropout > 0.0f)  // bias, ReLU and dropout in one pass after x W_1
    h = linear_dropout(x, f.linear1.W, f.linear1.b, true, ctx.dropout, *ctx.rng, true, f.linear1.form);
  else
    h = linear_relu(x, f.linear1.W, f.linear1.b, f.linear1.form);
  // FFN(x) = h W_2 + b_2                                       [batch, len, d_model]
  return forward_output(f.linear2, h, ctx);
}

}  // namespace attn
