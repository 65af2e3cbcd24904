// Translation of raw text: a model directory with its SentencePiece tokenizer, sentences batched
// by length, input order kept, an empty line in giving an empty line out.
#pragma once

#include <string>
#include <vector>

#include "attn/data/tokenizer.h"
#include "attn/decode/search.h"
#include "attn/models/seq2seq.h"
#include "attn/models/transformer.h"

namespace attn {

struct TranslationModel {
  Seq2Seq model;  // either family (config.json's "model")
  data::Tokenizer tokenizer;  // shared by source and target
};

// Reads DIR/config.json, DIR/model.safetensors and the tokenizer config.json names.
TranslationModel load_translation_model(const std::string& dir);

// Translates `lines`; `batch` sentences per search call, taken in order of length.
std::vector<std::string> translate_text(const TranslationModel& tm, const std::vector<std::string>& lines,
                                        const SearchOptions& options, int64_t batch = 32);

// The same for token ids already made (each source gets eos appended): returns target ids.
std::vector<std::vector<int32_t>> translate_ids(const Transformer& m,
                                                const std::vector<std::vector<int32_t>>& sources,
                                                const SearchOptions& options, int64_t batch = 32);
std::vector<std::vector<int32_t>> translate_ids(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                                const SearchOptions& options, int64_t batch = 32);

}  // namespace attn
