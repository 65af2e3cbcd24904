// The encoder-decoder Transformer's configuration. The defaults are the paper's base model
// (§3, Table 3: N = 6, d_model = 512, h = 8, d_ff = 2048, P_drop = 0.1); every departure from
// the paper is a named field.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace attn {

struct TransformerConfig {
  int64_t src_vocab = 8000;
  int64_t tgt_vocab = 8000;
  int64_t d_model = 512;
  int64_t heads = 8;  // h; d_k = d_v = d_model / h
  int64_t encoder_layers = 6;
  int64_t decoder_layers = 6;
  int64_t d_ff = 2048;
  float dropout = 0.1f;
  bool norm_first = false;        // pre-LN (LayerNorm before each sub-layer) instead of the paper's post-LN
  bool share_embeddings = true;   // one table for source and target (needs src_vocab == tgt_vocab)
  bool tie_output = true;         // the output projection's weight is the target embedding
  std::string positions = "sinusoidal";  // or "learned"
  std::string activation = "relu";       // or "gelu"
  int64_t max_len = 1024;         // positions available
  int32_t pad_id = 0, bos_id = 1, eos_id = 2;

  // The model family and the attention score (seeds 003 and 004).
  std::string model = "transformer";  // or "rnn": the RNN encoder-decoder (models/rnn_seq2seq.h)
  std::string score = "scaled_dot";   // scaled_dot, dot, additive or bilinear (nn/attention_score.h)
  // model "rnn" only (d_model is the embedding and decoder size; heads, d_ff, positions unused):
  std::string rnn_cell = "lstm";      // or "gru"
  bool bidirectional = true;          // bidirectional encoder
  int64_t encoder_hidden = 0;         // units per encoder direction; 0: d_model / directions
  bool input_feeding = true;          // the context c_t is part of the decoder's next input

  int64_t d_k() const { return d_model / heads; }
  void validate() const;  // throws attn::Error naming the field
};

// config.json <-> struct. Unknown keys are an error naming them; torch_ref.py's "ff" is read as
// d_ff. `source` names the file for messages.
TransformerConfig transformer_config_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::json transformer_config_to_json(const TransformerConfig& c);

}  // namespace attn
