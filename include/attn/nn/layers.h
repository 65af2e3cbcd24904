// The small building blocks every model shares: a linear map and a layer norm, as plain
// structs of parameters, and the per-call context (training or not, the dropout stream).
#pragma once

#include "attn/autodiff/var.h"
#include "attn/ops.h"
#include "attn/ops/linear_dropout.h"
#include "attn/tensor/random.h"

namespace attn {

// y = x W^T + b (nn.Linear)
struct Linear {
  Var W;  // [out, in]
  Var b;  // [out]; may be undefined
  WeightForm form;  // how products with W run: set when the model is prepared (its prepare())
};
inline Var forward(const Linear& l, const Var& x) { return linear(x, l.W, l.b, l.form); }
// Fixes how l's products run: precision p, for training or (frozen weights) inference.
// (A layer a configuration leaves out, W undefined, stays as it is.)
inline void prepare(Linear& l, Precision p, Use use) {
  if (l.W.defined()) l.form = weight_form(l.W.value(), p, use);
}

// LN(x) = gamma (x - mean) / sqrt(var + 1e-5) + beta (nn.LayerNorm)
struct LayerNorm {
  Var gamma;  // "weight" in PyTorch's names
  Var beta;   // "bias"
};
inline Var forward(const LayerNorm& ln, const Var& x) { return layer_norm(x, ln.gamma, ln.beta); }

// What a forward pass needs to know beyond its inputs.
struct Context {
  bool training = false;
  float dropout = 0.0f;  // P_drop; used only when training
  Rng* rng = nullptr;    // the dropout stream; needed when training with dropout > 0
  // The sub-layer applies Dropout(P_drop) to its own output (x + Dropout(Sublayer(x)), §5.4),
  // fused into its last linear layer by forward_output. Set by the models' sub-layer wrappers.
  bool dropout_output = false;
};
inline Var apply_dropout(const Var& x, const Context& ctx) {
  if (!ctx.training || ctx.dropout == 0.0f) return x;
  return dropout(x, ctx.dropout, *ctx.rng, true);
}

// A sub-layer's last linear layer: x W^T + b, or Dropout(x W^T + b) in one op (linear_dropout)
// when ctx.dropout_output asks for the sub-layer's output dropout.
inline Var forward_output(const Linear& l, const Var& x, const Context& ctx) {
  if (!ctx.dropout_output || !ctx.training || ctx.dropout == 0.0f) return forward(l, x);
  return linear_dropout(x, l.W, l.b, false, ctx.dropout, *ctx.rng, true, l.form);
}

}  // namespace attn
