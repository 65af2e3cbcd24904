// Attention, fused, the one implementation training, teacher-forced scoring and decoding share
// (§3.2.1):
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
// with the padding and causal masks applied to the scores before the softmax and dropout on
// the attention weights (where PyTorch's nn.MultiheadAttention puts it). Forward and backward
// here, one (batch, head) block at a time; the weights P are kept for the backward. Scores other
// than a product of queries and keys (nn/attention_score.h's additive score) enter as given scores
// (attention_from_scores); one query per row (incremental decoding) takes the row kernels of
// kernels/attend_rows.h (attention_one_query).
#pragma once

#include <cstdint>
#include <vector>

#include "attn/autodiff/var.h"
#include "attn/tensor/random.h"

namespace attn {

// Where the heads of q, k, v or the output lie: block (b, h), a [T, d] matrix, starts at
// data + b sb + h sh, its rows ld floats apart. [B, H, T, d] tensors and views, heads side by side
// in [B, T, H d] (as the projections make them and W^O takes them) and KV caches all take it.
struct HeadsLayout {
  float* data = nullptr;
  int64_t sb = 0, sh = 0, ld = 0;
  float beta = 1.0f;  // as a gradient target: 1 adds to the block, 0 overwrites it
  float* at(int64_t b, int64_t h) const { return data + b * sb + h * sh; }
};
// A [B, H, T, d] tensor, or a view of one with unit stride in the last dimension.
HeadsLayout heads_of(const Tensor& t);
// Heads side by side: head h of row t is columns [col + h d, col + (h + 1) d) of x [B, T, width].
HeadsLayout heads_side_by_side(const Tensor& x, int64_t col, int64_t d);

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

// softmax(mask(e)) V over scores e [batch, heads, queries, keys] computed by another function
// (the additive score): v [batch, heads, keys, d_v] -> [batch, heads, queries, d_v]. The gradient
// flows back into e. options.scale is ignored (e is taken as it is).
Var attention_from_scores(const Var& e, const Var& v, const AttentionMask& mask,
                          const AttentionOptions& options = {});

// Inference, one query per row (incremental decoding), for every row b and head h:
//   out = softmax(scale q K^T, padded keys masked) V,  written to [B, 1, H d_v]
// by the row kernels (kernels/attend_rows.h): at one query the products are too small for a GEMM
// call each. A query whose keys are all masked gets zeros, as above.
struct OneQuery {
  HeadsLayout q, k, v;
  int64_t B = 0, H = 0, keys = 0, dk = 0;
  float scale = 0.0f;              // 0: 1/sqrt(d_k)
  Tensor key_padding;              // i32 [rows of k, keys], nonzero = padding; may be undefined
  const int64_t* kv_rows = nullptr;  // row b reads keys, values and padding of row kv_rows[b] (null: b)
  // A KV cache's (self-attention): row b's key and value j (of history[b].size()) are in slot
  // history[b][j], at position first[b] + j (first null: j).
  const std::vector<std::vector<int32_t>>* history = nullptr;
  const int64_t* first = nullptr;
};
Tensor attention_one_query(const OneQuery& a);

}  // namespace attn
