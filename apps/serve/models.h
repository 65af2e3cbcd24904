// The models attn serve answers with: each loaded once, in its own precision, and read-only from
// then on (every request reads it; only its model's batcher thread computes with it).
//   --model NAME=DIR         the precision DIR/config.json records (attn convert), fp32 if none
//   --model NAME=DIR:int8    int8 (or fp32, bf16) whatever the directory stores
//   --shortlist NAME=FILE    model NAME decodes over the shortlist FILE (attn shortlist), as
//                            attn translate --shortlist FILE; a request may turn it off
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/tokenizer.h"
#include "attn/decode/shortlist.h"
#include "attn/kernels/precision.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/translate/translator.h"

namespace attn::serve {

// One --model value, parsed: NAME=DIR[:PRECISION].
struct ModelSpec {
  std::string name, dir, precision;  // precision empty: the model's own
};
ModelSpec parse_model_spec(const std::string& text);

// A language a model reads or writes: its code ("en") and name ("English"; the code when unknown).
struct Language {
  std::string code, name;
};

struct ServedModel {
  std::string name, dir;
  // config.json's "languages" (an imported Argos package's, say), else the name's "SOURCE-TARGET"
  // (--model en-de=DIR); empty codes when neither says
  Language source, target;
  Precision precision = Precision::fp32;
  std::optional<Translator> translator;        // a translation model (Transformer or RNN), its tokenizer
                                               // (none: token ids only) and --shortlist NAME=FILE
  std::optional<ClassifierModel> classifier;   // or a classifier
  size_t token_json_bytes = 12;                // the longest piece of its vocabulary as JSON text (an id: 12)

  const Seq2Seq& seq2seq() const { return translator->model(); }
  // Its tokenizers; empty: token ids only.
  Tokenizers tokenizers() const { return translator ? translator->tokenizers() : Tokenizers{}; }

  // "transformer", "rnn" or "classifier".
  std::string kind() const;
  // What GET /v1/models lists of it.
  nlohmann::json describe() const;
};

// Loads and prepares (Use::inference) the model of a spec; errors name the directory.
std::unique_ptr<ServedModel> load_served_model(const ModelSpec& spec);

// One --shortlist value, NAME=FILE, loaded for the translation model of that name among `models`.
void load_served_shortlist(const std::string& text, const std::vector<std::unique_ptr<ServedModel>>& models);

}  // namespace attn::serve
