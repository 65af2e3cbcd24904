// Private to src/models: reading config.json values into their real types, and the keys and
// checks every translation model family shares (TransformerConfig, RnnConfig).
//
// A number is read only when it is a number of the field's kind (an integer for an integer field,
// 32.7 is not 32), inside the field's range (no wrap-around), and finite; every error names the
// file and the key. Sizes are bounded by kLimits before anything is allocated, and the whole model
// by the machine's memory.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/models/transformer_config.h"

namespace attn::config_fields {

// Bounds well above any model a CPU trains, low enough that no product of them overflows.
struct Limits {
  int64_t vocab = int64_t{1} << 22;
  int64_t width = int64_t{1} << 16;   // d_model, encoder_hidden
  int64_t inner = int64_t{1} << 20;   // d_ff
  int64_t layers = 1000;
  int64_t positions = int64_t{1} << 20;  // max_len
};
inline constexpr Limits kLimits{};

// v as an integer in [lo, hi], or an error naming source and key.
int64_t read_int(const nlohmann::json& v, const std::string& key, const std::string& source, int64_t lo, int64_t hi);
// v as a finite number in [lo, hi] (hi_open: [lo, hi)).
double read_number(const nlohmann::json& v, const std::string& key, const std::string& source, double lo, double hi,
                   bool hi_open = false);
bool read_bool(const nlohmann::json& v, const std::string& key, const std::string& source);
std::string read_string(const nlohmann::json& v, const std::string& key, const std::string& source);

// Checks the size `what` (e.g. "d_model") of a config against [lo, hi].
void check_size(int64_t value, const char* what, int64_t lo, int64_t hi);
// Checks that a model of `parameters` floats fits in this machine's memory.
void check_fits_in_memory(double parameters, const char* family);

// The keys both seq2seq families have, with the same meaning. Returns false for another key.
template <class Config>
bool read_shared_key(const std::string& k, const nlohmann::json& v, Config& c, const std::string& source) {
  const Limits& L = kLimits;
  if (k == "src_vocab") c.src_vocab = read_int(v, k, source, 1, L.vocab);
  else if (k == "tgt_vocab") c.tgt_vocab = read_int(v, k, source, 1, L.vocab);
  else if (k == "d_model") c.d_model = read_int(v, k, source, 1, L.width);
  else if (k == "encoder_layers") c.encoder_layers = read_int(v, k, source, 0, L.layers);
  else if (k == "decoder_layers") c.decoder_layers = read_int(v, k, source, 1, L.layers);
  else if (k == "dropout") c.dropout = static_cast<float>(read_number(v, k, source, 0, 1, true));
  else if (k == "share_embeddings") c.share_embeddings = read_bool(v, k, source);
  else if (k == "tie_output") c.tie_output = read_bool(v, k, source);
  else if (k == "max_len") c.max_len = read_int(v, k, source, 1, L.positions);
  else if (k == "pad_id") c.pad_id = static_cast<int32_t>(read_int(v, k, source, 0, L.vocab - 1));
  else if (k == "bos_id") c.bos_id = static_cast<int32_t>(read_int(v, k, source, 0, L.vocab - 1));
  else if (k == "eos_id") c.eos_id = static_cast<int32_t>(read_int(v, k, source, 0, L.vocab - 1));
  else if (k == "score") parse(read_string(v, k, source), &c.score, source + ": score");
  else return false;
  return true;
}

template <class Config>
void write_shared_keys(const Config& c, nlohmann::json& j) {
  j["src_vocab"] = c.src_vocab;
  j["tgt_vocab"] = c.tgt_vocab;
  j["d_model"] = c.d_model;
  j["encoder_layers"] = c.encoder_layers;
  j["decoder_layers"] = c.decoder_layers;
  j["dropout"] = c.dropout;
  j["share_embeddings"] = c.share_embeddings;
  j["tie_output"] = c.tie_output;
  j["max_len"] = c.max_len;
  j["pad_id"] = c.pad_id;
  j["bos_id"] = c.bos_id;
  j["eos_id"] = c.eos_id;
}

template <class Config>
void validate_shared(const Config& c) {
  const Limits& L = kLimits;
  check_size(c.src_vocab, "src_vocab", 1, L.vocab);
  check_size(c.tgt_vocab, "tgt_vocab", 1, L.vocab);
  check_size(c.d_model, "d_model", 1, L.width);
  check_size(c.encoder_layers, "encoder_layers", 0, L.layers);
  check_size(c.decoder_layers, "decoder_layers", 1, L.layers);
  check_size(c.max_len, "max_len", 1, L.positions);
  check(c.dropout >= 0.0f && c.dropout < 1.0f, "config: dropout must be in [0, 1), got ", c.dropout);
  check(!c.share_embeddings || c.src_vocab == c.tgt_vocab, "config: share_embeddings needs src_vocab (",
        c.src_vocab, ") == tgt_vocab (", c.tgt_vocab, ")");
  for (int32_t id : {c.pad_id, c.bos_id, c.eos_id})
    check(id >= 0 && id < c.tgt_vocab, "config: special id ", id, " out of range for tgt_vocab ", c.tgt_vocab);
}

}  // namespace attn::config_fields
