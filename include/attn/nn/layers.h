// The small building blocks every model shares: a linear map and a layer norm, as plain
// structs of parameters, and the per-call context (training or not, the dropout stream).
#pragma once

#include "attn/autodiff/var.h"
#include "attn/ops.h"
#include "attn/tensor/random.h"

namespace attn {

// y = x W^T + b (nn.Linear)
struct Linear {
  Var W;  // [out, in]
  Var b;  // [out]; may be undefined
};
inline Var forward(const Linear& l, const Var& x) { return linear(x, l.W, l.b); }

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
};
inline Var apply_dropout(const Var& x, const Context& ctx) {
  if (!ctx.training || ctx.dropout == 0.0f) return x;
  return dropout(x, ctx.dropout, *ctx.rng, true);
}

}  // namespace attn
