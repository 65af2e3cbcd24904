// The configuration of seed 003's RNN encoder-decoder with attention (models/rnn_seq2seq.h;
// config.json "model": "rnn"). The sizes shared with the Transformer keep its names and meaning
// (models/transformer_config.h); the RNN has no heads, FFN or positions.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "attn/nn/rnn_cell.h"
#include "attn/nn/score_kind.h"

namespace attn {

struct RnnConfig {
  int64_t src_vocab = 8000;
  int64_t tgt_vocab = 8000;
  int64_t d_model = 512;         // the embeddings and the decoder's state
  int64_t encoder_layers = 1;    // == decoder_layers: decoder layer l starts from encoder layer l's state
  int64_t decoder_layers = 1;
  float dropout = 0.1f;          // between stacked layers and on the read-out
  bool share_embeddings = true;  // one table for source and target (needs src_vocab == tgt_vocab)
  bool tie_output = true;        // the output projection's weight is the target embedding
  int64_t max_len = 1024;        // the longest output search produces
  int32_t pad_id = 0, bos_id = 1, eos_id = 2;

  ScoreKind score = ScoreKind::additive;  // e_{t,i} = score(s_{t-1}, h_i); Bahdanau's by default
  RnnCell cell = RnnCell::lstm;
  bool bidirectional = true;     // bidirectional encoder
  int64_t encoder_hidden = 0;    // units per encoder direction; 0: d_model / directions
  bool input_feeding = true;     // the context c_t is part of the decoder's next input

  int64_t directions() const { return bidirectional ? 2 : 1; }
  int64_t encoder_units() const { return encoder_hidden > 0 ? encoder_hidden : d_model / directions(); }
  int64_t encoder_out() const { return directions() * encoder_units(); }  // the width of h_i
  void validate() const;  // throws attn::Error naming the field
};

// config.json <-> struct ("model": "rnn"; the cell is the key "rnn_cell"). Unknown keys, and the
// Transformer's own keys, are errors naming them. `source` names the file for messages.
RnnConfig rnn_config_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::json rnn_config_to_json(const RnnConfig& c);

}  // namespace attn
