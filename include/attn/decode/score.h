// The log-probability of given translations (teacher forcing), as torch_ref.py's score:
//   log P(y | x) = sum_t log p(y_t | y_<t, x)  over y followed by eos, with bos the first
// decoder input. Marian and CTranslate2 users rescore translations with this.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/models/seq2seq.h"
#include "attn/models/transformer.h"

namespace attn {

// One total log-prob per (source, target) pair, computed on one padded batch. Sources must be
// non-empty; a target may be empty (then it is log p(eos | bos, x)).
std::vector<double> score_translations(const Transformer& m,
                                       const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets);
// The same for a model of either family.
std::vector<double> score_translations(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets);

}  // namespace attn
