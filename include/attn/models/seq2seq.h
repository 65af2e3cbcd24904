// A translation model of either family behind one face, chosen by config.json's "model": the
// Transformer (models/transformer.h) or the RNN encoder-decoder of seed 003
// (models/rnn_seq2seq.h). Training, validation, search, scoring and the model directory go
// through it, so `attn train`, `translate` and `score` serve both.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/rnn_seq2seq.h"
#include "attn/models/scheduled_sampling.h"
#include "attn/models/transformer.h"

namespace attn {

struct Seq2Seq {
  Transformer transformer;  // when config().model == "transformer"
  RnnSeq2Seq rnn;           // when config().model == "rnn"

  bool is_rnn() const { return rnn.config.model == ModelKind::rnn; }
  const TransformerConfig& config() const { return is_rnn() ? rnn.config : transformer.config; }
  std::vector<std::pair<std::string, Var>> parameters() const;
};

Seq2Seq make_seq2seq(const TransformerConfig& config, uint64_t seed);
Seq2Seq as_seq2seq(Transformer m);
Seq2Seq as_seq2seq(RnnSeq2Seq m);

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

}  // namespace attn
