// A translation model of either family, chosen by config.json's "model" (ModelKind), parsed once
// where the config is read: the Transformer (models/transformer.h) or the RNN encoder-decoder of
// seed 003 (models/rnn_seq2seq.h), each with its own config. Training, validation, search,
// scoring and the model directory go through Seq2Seq, so `attn train`, `translate` and `score`
// serve both; code that needs one family asks for it with std::get_if.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/rnn_config.h"
#include "attn/models/rnn_seq2seq.h"
#include "attn/models/scheduled_sampling.h"
#include "attn/models/transformer.h"

namespace attn {

using Seq2SeqConfig = std::variant<TransformerConfig, RnnConfig>;

// What data, search and training read of a model of either family.
struct Seq2SeqCommon {
  int64_t src_vocab, tgt_vocab, d_model, max_len;
  int32_t pad_id, bos_id, eos_id;
  float dropout;
  ScoreKind score;
};

ModelKind kind_of(const Seq2SeqConfig& c);
Seq2SeqCommon common_of(const Seq2SeqConfig& c);
void validate(const Seq2SeqConfig& c);  // throws attn::Error naming the field
// By the key "model" ("transformer" when absent); `source` names the file for messages.
Seq2SeqConfig seq2seq_config_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::json seq2seq_config_to_json(const Seq2SeqConfig& c);

struct Seq2Seq {
  std::variant<Transformer, RnnSeq2Seq> net;

  ModelKind kind() const { return net.index() == 0 ? ModelKind::transformer : ModelKind::rnn; }
  Seq2SeqConfig config() const;
  Seq2SeqCommon common() const;  // without copying the config
  std::vector<std::pair<std::string, Var>> parameters() const;
  // Its encoder-decoder attention layers: what word alignments may be read from (the
  // Transformer's decoder layers; the RNN's one attention).
  int cross_attention_layers() const;
};

Seq2Seq make_seq2seq(const Seq2SeqConfig& config, uint64_t seed);
inline Seq2Seq as_seq2seq(Transformer m) { return Seq2Seq{std::move(m)}; }
inline Seq2Seq as_seq2seq(RnnSeq2Seq m) { return Seq2Seq{std::move(m)}; }

// Fixes how m's products run: precision p, for training or (frozen weights) inference. Models are
// made and loaded in fp32 for training; inference prepares a loaded model once.
void prepare(Seq2Seq& m, Precision p, Use use);
// m sharing its weights, prepared as asked: e.g. validation in fp32 of a model training in bf16.
Seq2Seq prepared(const Seq2Seq& m, Precision p, Use use);

// Teacher-forced logits [B, T, V] of tgt_in [B, T] (bos first) given src [B, S]; with
// feeding.teacher_forcing < 1, scheduled sampling (models/scheduled_sampling.h).
Var seq2seq_logits(const Seq2Seq& m, const Tensor& src, const Tensor& tgt_in, const Context& ctx,
                   const DecoderFeeding& feeding = {});

// The model directory: config.json (its "model" key picks the family) and model.safetensors.
Seq2Seq load_seq2seq(const std::string& dir);
void save_seq2seq(const Seq2Seq& m, const std::string& dir, const nlohmann::json& extra = nlohmann::json::object());
// Around loaded tensors (by key), of the family `config` names.
Seq2Seq seq2seq_from_tensors(const Seq2SeqConfig& config, std::map<std::string, Tensor> tensors,
                             const std::string& source);

}  // namespace attn
