// Scaled dot-product attention, fused (§3.2.1):
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
// with the padding and causal masks applied to the scores before the softmax and dropout on
// the attention weights (where PyTorch's nn.MultiheadAttention puts it). Forward and backward
// here, one (batch, head) block at a time; the weights P are kept for the backward.
#pragma once

#include "attn/autodiff/var.h"
#include "attn/tensor/random.h"

namespace attn {

struct AttentionMask {
  Tensor key_padding;  // i32 [batch, keys], nonzero = padding (never attended); may be undefined
  bool causal = false; // query i sees keys j <= i + (keys - queries): the decoder's self-attention
};

struct AttentionOptions {
  float dropout = 0.0f;
  Rng* rng = nullptr;         // needed when dropout > 0
  float scale = 0.0f;         // 0: 1/sqrt(d_k)
  Tensor* weights = nullptr;  // if given, receives P [batch, heads, queries, keys]
};

// q: [batch, heads, queries, d_k], k: [batch, heads, keys, d_k], v: [batch, heads, keys, d_v]
// -> [batch, heads, queries, d_v]. A query whose keys are all masked gets a zero output.
Var scaled_dot_product_attention(const Var& q, const Var& k, const Var& v,
                                 const AttentionMask& mask, const AttentionOptions& options = {});

// The same with the heads side by side, as the projections produce them and W^O takes them: no
// split or merge. Each operand is columns [col, col + width) of x [batch, len, *] (self-attention
// passes its packed [Q K V] projection three times), head i the i-th of `heads` equal parts.
// Returns Concat(head_1, ..., head_h): [batch, queries, v.width]. options.weights, if given,
// receives P [batch, heads, queries, keys].
struct PackedHeads {
  Var x;
  int64_t col = 0, width = 0;
};
Var packed_attention(const PackedHeads& q, const PackedHeads& k, const PackedHeads& v, int64_t heads,
                     const AttentionMask& mask, const AttentionOptions& options = {});

}  // namespace attn
