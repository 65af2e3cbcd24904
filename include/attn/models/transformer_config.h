// The encoder-decoder Transformer's configuration. The defaults are the paper's base model
// (§3, Table 3: N = 6, d_model = 512, h = 8, d_ff = 2048, P_drop = 0.1); every departure from
// the paper is a named field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "attn/nn/activation.h"
#include "attn/nn/score_kind.h"

namespace attn {

// The model family of a translation model (config.json's "model"): the Transformer, or seed 003's
// RNN encoder-decoder (models/rnn_config.h, models/rnn_seq2seq.h). models/seq2seq.h holds either.
enum class ModelKind { transformer, rnn };
// sinusoidal: §3.5's table, sin and cos interleaved (PE(pos, 2i) = sin, PE(pos, 2i+1) = cos);
// sinusoidal_halves: the same angles with every sin in the first half and every cos in the second
// (Marian's, tensor2tensor's and Hugging Face Marian's layout); learned: a trained table.
enum class Positions { sinusoidal, learned, sinusoidal_halves };

const char* name(ModelKind k);
const char* name(Positions p);
const char* name(Activation a);
// Each throws attn::Error naming `what` and the accepted names.
void parse(std::string_view text, ModelKind* out, std::string_view what = "model");
void parse(std::string_view text, Positions* out, std::string_view what = "positions");
void parse(std::string_view text, Activation* out, std::string_view what = "activation");
void parse(std::string_view text, ScoreKind* out, std::string_view what = "score");

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
  Positions positions = Positions::sinusoidal;
  Activation activation = Activation::relu;
  bool final_norm = true;         // a LayerNorm after each stack (nn.Transformer's); Marian's post-LN models have none
  bool scale_embeddings = true;   // Embed(ids) sqrt(d_model) (§3.4); false: the embeddings as they are
  int64_t max_len = 1024;         // positions available
  int32_t pad_id = 0, bos_id = 1, eos_id = 2;

  ScoreKind score = ScoreKind::scaled_dot;  // of every head (seed 004; nn/attention_score.h)

  int64_t d_k() const { return d_model / heads; }
  void validate() const;  // throws attn::Error naming the field
};

// config.json <-> struct. Unknown keys are an error naming them (an RNN's keys too: its config is
// models/rnn_config.h); torch_ref.py's "ff" is read as d_ff. `source` names the file for messages.
TransformerConfig transformer_config_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::json transformer_config_to_json(const TransformerConfig& c);

}  // namespace attn
