// Ensembles of models sharing a target vocabulary (Marian's --models M1 M2 --weights w1 w2): one
// search over log p(y | prefix, x) = sum_m w_m log p_m(y | prefix, x), any mix of model families
// (Transformer, RNN); each member encodes the source itself. Weights default to 1/M each (the
// average of the log-probs) and are used as given, not renormalised.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/decode/search.h"
#include "attn/models/seq2seq.h"

namespace attn {

struct EnsembleMember {
  const Seq2Seq* model = nullptr;
  double weight = 1.0;
};

// The members of models with weights (empty: 1/M each). Checks the count, that every weight is
// finite and >= 0 and one > 0 (a weight-0 member adds nothing), and that the models share the target vocabulary (size, bos, eos; an error naming the
// member otherwise).
std::vector<EnsembleMember> make_ensemble(const std::vector<const Seq2Seq*>& models,
                                          const std::vector<double>& weights);

// search() over the ensemble's log-probs: greedy, beam or sampling, with every SearchOptions.
std::vector<std::vector<Hypothesis>> search(const std::vector<EnsembleMember>& members,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options, const SentenceInputs& inputs = {});

// log P(y | x) under the ensemble: sum_t sum_m w_m log p_m(y_t | y_<t, x) = sum_m w_m score_m,
// per (source, target) pair (decode/score.h).
std::vector<double> score_translations(const std::vector<EnsembleMember>& members,
                                       const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets);

}  // namespace attn
