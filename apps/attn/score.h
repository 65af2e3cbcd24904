// What attn score computes, shared by the binary and the Python module (Translator.score_batch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/data/tokenizer.h"
#include "attn/decode/ensemble.h"
#include "attn/models/seq2seq.h"

namespace attn::cli {

// Text lines as token ids, `eos` appended when >= 0 (the model's source is x + eos); a blank
// source line is an error naming `name` and the line.
std::vector<std::vector<int32_t>> encode_score_lines(const std::vector<std::string>& texts, const std::string& name,
                                                     const data::Tokenizer& tokenizer, int32_t eos);

// Each pair's total log-prob, in input order, batched by length (`batch` pairs a batch): `model`
// alone, or the ensemble `members` when !alone.
std::vector<double> score_pairs(const Seq2Seq& model, const std::vector<EnsembleMember>& members, bool alone,
                                const std::vector<std::vector<int32_t>>& sources,
                                const std::vector<std::vector<int32_t>>& targets, int batch);

}  // namespace attn::cli
