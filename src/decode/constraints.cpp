#include "attn/decode/constraints.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "attn/error.h"
#include "attn/ops/softmax.h"
#include "attn/parallel.h"

namespace attn {
namespace {

constexpr float kBanned = -std::numeric_limits<float>::infinity();

// Every token already output: log-prob times R, then the row renormalised.
void penalise_repeats(float* logp, int64_t V, const std::vector<int32_t>& history, double r) {
  std::set<int32_t> seen(history.begin(), history.end());
  for (int32_t t : seen)
    if (t >= 0 && t < V) logp[t] = static_cast<float>(logp[t] * r);
  std::vector<float> penalised(logp, logp + V);
  log_softmax_rows(penalised.data(), logp, 1, V);
}

// A token that would complete an n-gram of n tokens the history already holds is banned.
void ban_repeated_ngrams(float* logp, int64_t V, const std::vector<int32_t>& h, int n) {
  const size_t len = h.size(), context = static_cast<size_t>(n) - 1;  // the tokens before the new one
  if (len < context) return;
  for (size_t i = 0; i + context < len; ++i) {  // the n-gram h[i .. i+context]
    bool same = true;
    for (size_t j = 0; same && j < context; ++j) same = h[i + j] == h[len - context + j];
    int32_t next = h[i + context];
    if (same && next >= 0 && next < V) logp[next] = kBanned;
  }
}

}  // namespace

void constrain_row(float* logp, int64_t V, const std::vector<int32_t>& history, int32_t forced, const Constraints& c) {
  if (forced >= 0) {
    check(forced < V, "target prefix: id ", forced, " is not in the target vocabulary of ", V);
    for (int64_t v = 0; v < V; ++v)
      if (v != forced) logp[v] = kBanned;
    return;
  }
  if (c.repetition_penalty != 1.0 && !history.empty()) penalise_repeats(logp, V, history, c.repetition_penalty);
  float eos_logp = logp[c.eos_id];
  if (c.no_repeat_ngram > 0) ban_repeated_ngrams(logp, V, history, c.no_repeat_ngram);
  if (static_cast<int64_t>(history.size()) < c.min_len) logp[c.eos_id] = kBanned;
  for (int32_t t : c.suppressed)
    if (t >= 0 && t < V) logp[t] = kBanned;
  bool any = false;
  for (int64_t v = 0; !any && v < V; ++v) any = std::isfinite(logp[v]);
  if (!any) logp[c.eos_id] = eos_logp;  // nothing may follow: the output ends
  if (c.renormalize) {  // transformers' LogitNormalization, the last of its processors
    std::vector<float> rules_applied(logp, logp + V);
    log_softmax_rows(rules_applied.data(), logp, 1, V);
  }
}

void constrain_rows(Tensor& logp, const std::vector<const std::vector<int32_t>*>& histories,
                    const std::vector<int32_t>& forced, const Constraints& c) {
  const int64_t rows = logp.size(0), V = logp.size(1);
  check(static_cast<int64_t>(histories.size()) == rows && static_cast<int64_t>(forced.size()) == rows,
        "constrain_rows: ", rows, " rows, ", histories.size(), " histories, ", forced.size(), " forced tokens");
  float* p = logp.data<float>();
  for_each_index(rows, rows * V >= (1 << 16), [&](int64_t r) {
    const size_t i = static_cast<size_t>(r);
    constrain_row(p + r * V, V, *histories[i], forced[i], c);
  });
}

}  // namespace attn
