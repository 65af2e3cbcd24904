// What the search may choose at a step beside the model's log-probs: a forced target prefix
// (CTranslate2's target_prefix), a minimum length, no repeated n-grams (fairseq's
// --no-repeat-ngram-size) and a repetition penalty. Each rewrites one row of log-probs before the
// search (beam, greedy or sampling) takes its tokens from it; a banned token gets -inf, and the
// searches never take a token of -inf.
//
// The repetition penalty acts on log-probs, not logits (CTranslate2 and Hugging Face divide a
// positive logit by R and multiply a negative one; a log-prob is never positive, so here every
// token already in the row's output has its log-prob multiplied by R, then the row is
// renormalised (log-softmax again) so that scores stay log-probabilities). R > 1 discourages
// repeats, R < 1 encourages them, R = 1 changes nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/tensor/tensor.h"

namespace attn {

struct Constraints {
  int min_len = 0;                  // eos banned until the output (prefix included) holds min_len tokens
  int no_repeat_ngram = 0;          // N: no n-gram of N tokens twice in an output (0: off)
  double repetition_penalty = 1.0;  // R (1: off)
  int32_t eos_id = 2;
  std::vector<int32_t> suppressed;  // never output (decode/search.h's suppress)
  bool renormalize = false;         // the row log-softmaxed again after the rules (decode/search.h's)
  bool any() const {
    return min_len > 0 || no_repeat_ngram > 0 || repetition_penalty != 1.0 || !suppressed.empty() || renormalize;
  }
};

// One row of log-probs [V], for an output that holds `history` so far (no bos). forced >= 0: that
// token is the only one allowed (its log-prob kept as the model gave it; the prefix is not
// subject to the other rules). Otherwise the rules in order: repetition penalty, no-repeat
// n-grams, min_len, the suppressed tokens. If they ban every token, eos is allowed (the
// output ends rather than having no continuation). Then, with renormalize, the row's log-softmax.
void constrain_row(float* logp, int64_t V, const std::vector<int32_t>& history, int32_t forced, const Constraints& c);

// Every row r of logp [rows, V], rows split over the threads.
void constrain_rows(Tensor& logp, const std::vector<const std::vector<int32_t>*>& histories,
                    const std::vector<int32_t>& forced, const Constraints& c);

}  // namespace attn
