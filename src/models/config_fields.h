// Private to src/models: the keys every translation model family shares (TransformerConfig,
// RnnConfig), declared once for both, and what reading and checking a model config takes beyond
// its table.
//
// A number is read only when it is a number of the key's kind (an integer for an integer member,
// 32.7 is not 32), inside the key's range (no wrap-around), and finite; every error names the file
// and the key. Sizes are bounded by kLimits before anything is allocated, and the whole model by
// the machine's memory.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/config_keys.h"
#include "attn/models/limits.h"

namespace attn::config_fields {

// config.json's keys that belong to other readers than the network's (the model directory's).
const std::set<std::string>& not_the_networks();

// Sets the members of `keys` from config.json's object j (a key in `skipped` is left alone);
// an unknown key is an error naming `source`, the key and `family`.
void read_fields(const nlohmann::json& j, const std::vector<BoundKey>& keys, const std::set<std::string>& skipped,
                 const std::string& source, const std::string& family);

// The family config.json's "model" names, when it names one; an error naming `source` when it names
// another than `kind`.
void check_family(const nlohmann::json& j, ModelKind kind, const std::string& source, const char* load_it_as);

// Checks that a model of `parameters` floats fits in this machine's memory.
void check_fits_in_memory(double parameters, const char* family);

// The keys both seq2seq families have, with the same meaning and range.
template <class Config>
std::vector<ConfigKey<Config>> shared_seq2seq_keys() {
  const Limits& L = kLimits;
  using C = Config;
  const Bounds id = between(0, static_cast<double>(L.vocab - 1));
  return {
      {{"src_vocab", "source vocabulary size", between(1, L.vocab)}, [](C& c) -> Field { return &c.src_vocab; }},
      {{"tgt_vocab", "target vocabulary size", between(1, L.vocab)}, [](C& c) -> Field { return &c.tgt_vocab; }},
      {{"d_model", "d_model: the embeddings and every sub-layer's output (rnn: the embeddings and the decoder's state)",
        between(1, L.width)}, [](C& c) -> Field { return &c.d_model; }},
      {{"encoder_layers", "N of the encoder", between(0, L.layers)}, [](C& c) -> Field { return &c.encoder_layers; }},
      {{"decoder_layers", "N of the decoder", between(1, L.layers)}, [](C& c) -> Field { return &c.decoder_layers; }},
      {{"dropout", "P_drop: embeddings, attention weights, FFN inner, sub-layer outputs (rnn: between layers and on "
                   "the read-out)", fraction_below_one()}, [](C& c) -> Field { return &c.dropout; }},
      {{"share_embeddings", "one embedding table for source and target (needs src_vocab == tgt_vocab)"},
       [](C& c) -> Field { return &c.share_embeddings; }},
      {{"tie_output", "output projection tied to the target embedding"}, [](C& c) -> Field { return &c.tie_output; }},
      {{"max_len", "longest sequence the positions cover (rnn: the longest output search produces)",
        between(1, L.positions)}, [](C& c) -> Field { return &c.max_len; }},
      {{"pad_id", "padding id", id}, [](C& c) -> Field { return &c.pad_id; }},
      {{"bos_id", "beginning-of-sentence id", id}, [](C& c) -> Field { return &c.bos_id; }},
      {{"eos_id", "end-of-sentence id", id}, [](C& c) -> Field { return &c.eos_id; }},
      {{"score", "attention score: scaled_dot, dot, additive (Bahdanau) or bilinear (Luong general); additive for rnn "
                 "unless given", {}, {"scaled_dot", "dot", "additive", "bilinear"}},
       [](C& c) -> Field { return &c.score; }},
  };
}

// The checks between shared keys (each key's own range is its table's).
template <class Config>
void validate_shared(const Config& c) {
  check(!c.share_embeddings || c.src_vocab == c.tgt_vocab, "config: share_embeddings needs src_vocab (",
        c.src_vocab, ") == tgt_vocab (", c.tgt_vocab, ")");
  for (int32_t id : {c.pad_id, c.bos_id, c.eos_id})
    check(id >= 0 && id < c.tgt_vocab, "config: special id ", id, " out of range for tgt_vocab ", c.tgt_vocab);
}

}  // namespace attn::config_fields
