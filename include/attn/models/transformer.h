// The encoder-decoder Transformer of "Attention Is All You Need" (§3, Figure 1).
//
//   encoder:  x = Embed(src) sqrt(d_model) + PE;  N x { x = LN(x + MultiHead(x, x, x));
//                                                       x = LN(x + FFN(x)) };  LN
//   decoder:  y = Embed(tgt) sqrt(d_model) + PE;  N x { y = LN(y + MaskedMultiHead(y, y, y));
//                                                       y = LN(y + MultiHead(y, x, x));
//                                                       y = LN(y + FFN(y)) };  LN
//   output:   softmax(y W_out^T + b)
//
// That is post-LN, the paper's order; with norm_first (pre-LN) each sub-layer is
// x = x + Sublayer(LN(x)). The final LayerNorm of each stack is nn.Transformer's. Parameter names
// are torch_ref.py's state_dict keys, so import and export are one-to-one.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/models/attention_maps.h"
#include "attn/models/transformer_config.h"
#include "attn/nn/feed_forward.h"
#include "attn/nn/multi_head_attention.h"

namespace attn {

struct EncoderLayer {
  MultiHeadAttention self_attn;
  FeedForward ff;
  LayerNorm norm1, norm2;
};

struct DecoderLayer {
  MultiHeadAttention self_attn;       // masked: position i sees positions <= i
  MultiHeadAttention multihead_attn;  // encoder-decoder attention
  FeedForward ff;
  LayerNorm norm1, norm2, norm3;
};

struct Transformer {
  TransformerConfig config;
  Var src_embed, tgt_embed;  // [vocab, d_model]; one Var when shared
  Var pos_embed;             // [max_len, d_model] when positions are learned
  Tensor pe;                 // [max_len, d_model] sinusoids otherwise
  std::vector<EncoderLayer> encoder;
  LayerNorm encoder_norm;
  std::vector<DecoderLayer> decoder;
  LayerNorm decoder_norm;
  Linear generator;  // W_out [tgt_vocab, d_model] (tgt_embed when tied), b [tgt_vocab]

  // Every parameter by checkpoint key; tied keys map to the same Var.
  std::map<std::string, Var> named;
  // The distinct parameters in a fixed order (what an optimizer updates).
  std::vector<std::pair<std::string, Var>> parameters() const;
};

// A new model: weight matrices Xavier-uniform, embeddings N(0, d_model^-1/2), biases 0,
// LayerNorm gamma 1 and beta 0.
Transformer make_transformer(const TransformerConfig& config, uint64_t seed);

// Builds the model around given tensors (by checkpoint key). Every key the config needs must be
// present with the right shape; extra keys are an error. `source` names the file for messages.
// Tensors the map alone holds (a loader's map passed as a temporary) become the parameters
// without a copy; others are copied (load_named_tensors).
Transformer transformer_from_tensors(const TransformerConfig& config, std::map<std::string, Tensor> tensors,
                                     const std::string& source);

// Fixes how m's products run: precision p, for training or (frozen weights) inference. A model is
// built or loaded in fp32 for training; inference prepares it once after loading.
void prepare(Transformer& m, Precision p, Use use);

// The padding mask of a batch of ids: [batch, len] I32, 1 where ids == pad_id.
Tensor padding_mask(const Tensor& ids, int32_t pad_id);

// src [batch, src_len] ids -> memory [batch, src_len, d_model]. maps, if given, receives each
// layer's self-attention weights (maps->encoder_self).
Var encode(const Transformer& m, const Tensor& src, const Context& ctx, AttentionMaps* maps = nullptr);
// Inference: encode() with every position-wise layer over the real positions only (the padding
// skipped, include/attn/ops/padding.h). Equal to encode() at the real positions, 0 at the padding,
// which the decoder's attention never reads.
Tensor encode_real_positions(const Transformer& m, const Tensor& src);
// tgt_in [batch, tgt_len] ids (bos first) -> logits [batch, tgt_len, tgt_vocab]. maps, if given,
// receives each layer's masked self-attention and encoder-decoder attention weights.
Var decode(const Transformer& m, const Tensor& tgt_in, const Var& memory, const Tensor& src_pad,
           const Context& ctx, AttentionMaps* maps = nullptr);

// Incremental decoding (inference only). The encoder-decoder keys and values are computed once
// per sentence; each decoder layer caches its self-attention keys and values.
struct DecoderState {
  std::vector<KVCache> self;
  std::vector<Tensor> memory_k, memory_v;  // [batch, heads, src_len, d_k] per layer
  Tensor src_pad;                          // [batch, src_len]
  std::vector<int64_t> memory_rows;        // decoder row r attends to memory row memory_rows[r]
  int64_t position = 0;                    // tokens fed so far (rows that joined later: fewer, below)
};
// cache_positions: the room the self-attention caches take at the first step (0: 16), grown by
// half whenever full; a decoder whose outputs end near their sources' length sizes them once.
DecoderState start_decoding(const Transformer& m, const Tensor& memory, const Tensor& src_pad,
                            int64_t cache_positions = 0);
// Feeds one token per row ([batch] ids) and returns log-probabilities of the next [batch, tgt_vocab].
Tensor decode_step(const Transformer& m, DecoderState& state, const std::vector<int32_t>& tokens);
// The same step's logits [batch, tgt_vocab], whose log_softmax is decode_step's answer.
Tensor decode_step_logits(const Transformer& m, DecoderState& state, const std::vector<int32_t>& tokens);
// The same logits handed to visit(first row, logits [rows, tgt_vocab]) in consecutive blocks of
// kLogitRows rows as the output layer makes them (decode_step_logits is made of the same blocks,
// so the bits agree): a block of 16 rows of an 8,000-piece vocabulary (512 KB) stays in a core's
// L2 cache while a search reads it; 64 rows at once spill to L3 (d_model 128, 1 thread, Zen 5:
// 1,424 us for 64 rows against 4 x 301 for 16).
inline constexpr int64_t kLogitRows = 16;
using LogitBlock = std::function<void(int64_t first_row, const Tensor& logits)>;
void decode_step_logit_blocks(const Transformer& m, DecoderState& state, const std::vector<int32_t>& tokens,
                              const LogitBlock& visit);
// The same step up to the output layer: the decoder's last hidden state [batch, d_model] (after
// its final norm), which the generator and a softmax turn into log-probabilities.
Tensor decode_step_hidden(const Transformer& m, DecoderState& state, const std::vector<int32_t>& tokens);
// Keeps rows `rows` of every cache (beam reordering, finished sentences leaving the batch). The
// memory keys and values stay where they are; only the rows' indices into them move.
void select_rows(DecoderState& state, const std::vector<int64_t>& rows);
// Continuous batching: sentences join a decoder already running. memory [n, src_len, d_model] and
// src_pad [n, src_len] as for start_decoding; each becomes a new row after the existing ones, at
// its own position 0, its memory keys and values in a memory row no decoder row reads any more (or
// a new one). Each row's steps then equal those of a decoder started on its sentence alone.
void add_sentences(const Transformer& m, DecoderState& state, const Tensor& memory, const Tensor& src_pad);

}  // namespace attn
