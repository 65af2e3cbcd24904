// Every attention weight of one forward pass, for looking inside a model (attn attend, word
// alignments). The normal forward passes take an optional AttentionMaps* and fill it when given;
// without one they run as always (the single-query decoding kernels never produce weights, so
// search does not use this).
//
// A map is softmax(mask(scores)) per head, what PyTorch's nn.MultiheadAttention returns with
// need_weights=True, average_attn_weights=False: row i is query position i's distribution over
// the key positions.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/tensor/tensor.h"

namespace attn {

struct AttentionMaps {
  // One tensor per layer, [batch, heads, queries, keys] each.
  std::vector<Tensor> encoder_self;  // source over source
  std::vector<Tensor> decoder_self;  // target over target, causal (query i sees keys <= i)
  std::vector<Tensor> cross;         // target over source (the RNN's alpha: one "layer", one head)
};

// The [queries, keys] matrix of row b, head h of a map [batch, heads, queries, keys], as rows.
std::vector<std::vector<float>> head_matrix(const Tensor& map, int64_t b, int64_t h);
// The same averaged over the heads.
std::vector<std::vector<float>> mean_over_heads(const Tensor& map, int64_t b);

}  // namespace attn
