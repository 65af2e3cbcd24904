// Private to src/ops: handing gradients to a Var without the copies of accumulate_grad.
//   grad_target: the buffer a backward product writes every element of. When v has no gradient
//     yet, a new uninitialised buffer (beta = 0: overwrite); else the existing one (beta = 1: add).
//   give_grad: a freshly computed dense gradient (not shared with anything else) becomes v's
//     gradient as it is when v has none yet, instead of being cloned; else it is added.
#pragma once

#include "attn/autodiff/var.h"
#include "attn/error.h"
#include "attn/kernels/elementwise.h"

namespace attn::detail {

inline float* grad_target(const Var& v, float* beta) {
  Node* n = v.node();
  if (!n->grad.defined()) {
    n->grad = Tensor::empty(n->value.shape());
    *beta = 0.0f;
  } else {
    *beta = 1.0f;
  }
  return n->grad.data<float>();
}

inline void give_grad(const Var& v, Tensor g) {
  Node* n = v.node();
  if (!n->grad.defined() && g.is_contiguous() && g.shape() == n->value.shape() && g.dtype() == DType::f32) {
    n->grad = std::move(g);
    return;
  }
  v.accumulate_grad(g);
}

}  // namespace attn::detail
