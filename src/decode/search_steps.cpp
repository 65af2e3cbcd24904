#include "search_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/error.h"
#include "attn/kernels/vexp.h"
#include "attn/parallel.h"

namespace attn::detail {
namespace {

struct Candidate {
  size_t parent;  // index into alive
  int32_t token;
  double logprob;  // the parent's plus this token's
};

// The k best (value, index) of row[0..V) - shift, best first; equal values: lower index first.
// Once k are held, a block of the row whose largest value does not beat the k-th best is skipped
// whole (most of a vocabulary): the same answer as looking at each value, at a fraction of the
// cost. x - shift is monotone in x (rounding keeps order), so the block's largest value gives
// its best entry, and the shift can be the log-sum-exp of a row of logits: the row's
// log-softmax, x - lse as log_softmax_rows computes it, without writing it.
std::vector<std::pair<float, int32_t>> top_k(const float* row, int64_t V, int k, float shift) {
  constexpr int64_t kBlock = 64;
  std::vector<std::pair<float, int32_t>> best;  // kept sorted, best first
  best.reserve(static_cast<size_t>(k) + 1);
  for (int64_t v0 = 0; v0 < V; v0 += kBlock) {
    const int64_t v1 = std::min(V, v0 + kBlock);
    if (static_cast<int>(best.size()) == k) {
      const float most = max_of(row + v0, v1 - v0) - shift;
      if (most == most && !(most > best.back().first)) continue;  // a NaN: looked at value by value
    }
    for (int64_t v = v0; v < v1; ++v) {
      const float x = row[v] - shift;
      if (static_cast<int>(best.size()) == k && !(x > best.back().first)) continue;
      auto at = std::find_if(best.begin(), best.end(), [&](const auto& b) { return x > b.first; });
      best.insert(at, {x, static_cast<int32_t>(v)});
      if (static_cast<int>(best.size()) > k) best.pop_back();
    }
  }
  return best;
}

using TopK = std::vector<std::pair<float, int32_t>>;

// The k best tokens of rows [first, first + scores.size(0)) of the step, into best[first..]: from
// a block of its log-probs or, from_logits, of its logits (the log-softmax taken on the fly);
// rows split over the threads.
void top_k_rows(const Tensor& scores, int k, bool from_logits, int64_t first, std::vector<TopK>& best) {
  const int64_t rows = scores.size(0), V = scores.size(1);
  const float* p = scores.data<float>();
  for_each_index(rows, rows * V >= (1 << 16), [&](int64_t r) {
    const float* x = p + r * V;
    float shift = 0.0f;  // x - 0 is x
    if (from_logits) {
      // log sum_i exp(x_i) = max + log sum_i exp(x_i - max), as log_softmax_rows
      const float mx = max_of(x, V);
      shift = mx + std::log(sum_exp(x, V, mx));
    }
    best[static_cast<size_t>(first + r)] = top_k(x, V, k, shift);
  });
}

// Every live prefix's proposals of `best` (banned tokens, -inf, left out: decode/constraints.h),
// best total log-prob first (stable: ties keep proposal order). float32_sums: each total is
// summed in float32, as transformers' beam_scores; otherwise in double, as torch_ref.py.
std::vector<Candidate> sorted_candidates(const SentenceSearch& s, const std::vector<TopK>& best, bool float32_sums) {
  std::vector<Candidate> cands;
  for (size_t j = 0; j < s.alive.size(); ++j)
    for (const auto& [value, token] : best[static_cast<size_t>(s.alive[j].row)])
      if (value != -std::numeric_limits<float>::infinity())
        cands.push_back({j, token,
                         float32_sums ? static_cast<double>(static_cast<float>(s.alive[j].logprob) + value)
                                      : s.alive[j].logprob + static_cast<double>(value)});
  std::stable_sort(cands.begin(), cands.end(),
                   [](const Candidate& a, const Candidate& b) { return a.logprob > b.logprob; });
  return cands;
}

// The finished list keeps its k best by score.
void keep_best_finished(SentenceSearch& s, int k) {
  std::stable_sort(s.finished.begin(), s.finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (static_cast<int>(s.finished.size()) > k) s.finished.resize(static_cast<size_t>(k));
}

// One step of transformers' beam search for one sentence (decode/search.h's SearchRules), given
// the 2k best tokens of every row of the step's log-probs; s.steps counts this step.
void advance_transformers(SentenceSearch& s, const std::vector<TopK>& best, int k, double alpha, int32_t eos,
                          bool early_stopping) {
  std::vector<Candidate> cands = sorted_candidates(s, best, true);
  if (cands.size() > static_cast<size_t>(2 * k)) cands.resize(static_cast<size_t>(2 * k));  // topk(2K) of K x V
  std::vector<Prefix> alive;
  for (size_t rank = 0; rank < cands.size() && static_cast<int>(alive.size()) < k; ++rank) {
    const Candidate& c = cands[rank];
    const Prefix& parent = s.alive[c.parent];
    if (c.token == eos) {
      if (rank >= static_cast<size_t>(k)) continue;  // an eos below the K best is not kept
      const int64_t len = static_cast<int64_t>(parent.tokens.size()) + 1;  // counting the eos
      s.finished.push_back({parent.tokens, c.logprob,
                            c.logprob / length_normaliser(len, alpha, SearchRules::transformers)});
    } else {
      Prefix p{parent.tokens, c.logprob, parent.row};
      p.tokens.push_back(c.token);
      alive.push_back(std::move(p));
    }
  }
  keep_best_finished(s, k);
  s.alive = std::move(alive);
  // BeamHypotheses.is_done: K finished, and with early_stopping=False the step's best proposal
  // (a total log-prob; eos or not) over this step's length^alpha no better than the K-th's score.
  if (static_cast<int>(s.finished.size()) >= k) {
    const double best_now = cands.empty() ? -std::numeric_limits<double>::infinity() : cands.front().logprob;
    s.stopped = early_stopping ||
                s.finished.back().score >= best_now / length_normaliser(s.steps, alpha, SearchRules::transformers);
  }
  s.done = s.stopped || s.alive.empty() || s.steps >= s.max_len;
}

// The last step (max_len) of CTranslate2's beam search: each of the K best candidates ends, eos or
// not (decoding.cc: is_last_step registers them all), and they join the finished ones.
void end_ctranslate2(SentenceSearch& s, const std::vector<TopK>& best, int k, double alpha, int32_t eos) {
  std::vector<Candidate> cands = sorted_candidates(s, best, true);
  if (cands.size() > static_cast<size_t>(k)) cands.resize(static_cast<size_t>(k));
  for (const Candidate& c : cands) {
    std::vector<int32_t> tokens = s.alive[c.parent].tokens;
    const bool ended = c.token == eos;
    if (!ended) tokens.push_back(c.token);
    const int64_t len = static_cast<int64_t>(tokens.size()) + (ended ? 1 : 0);  // the eos counts
    s.finished.push_back({std::move(tokens), c.logprob,
                          c.logprob / length_normaliser(len, alpha, SearchRules::ctranslate2), ended});
  }
  keep_best_finished(s, k);
  s.alive.clear();
  s.stopped = s.done = true;
}

// One step of torch_ref.py's beam_search for one sentence, given the k best tokens of every row
// of the step's log-probs; s.steps counts this step.
void advance(SentenceSearch& s, const std::vector<TopK>& best, int k, double alpha, int32_t eos) {
  // Each live prefix proposes its k best next tokens.
  const std::vector<Candidate> cands = sorted_candidates(s, best, false);
  // Walked in order: eos -> finished, else -> the new beam, until it holds k.
  std::vector<Prefix> alive;
  for (const Candidate& c : cands) {
    const Prefix& parent = s.alive[c.parent];
    if (c.token == eos) {
      int64_t len = static_cast<int64_t>(parent.tokens.size()) + 1;  // counting the eos
      s.finished.push_back({parent.tokens, c.logprob, c.logprob / length_penalty(len, alpha)});
    } else {
      Prefix p{parent.tokens, c.logprob, parent.row};  // row: the parent's, until reordered
      p.tokens.push_back(c.token);
      alive.push_back(std::move(p));
    }
    if (static_cast<int>(alive.size()) == k) break;
  }
  keep_best_finished(s, k);
  s.alive = std::move(alive);
  // An unfinished prefix can only lose log-prob; with alpha > 0 its penalty can still grow.
  double best_possible = -1e30;
  for (const Prefix& p : s.alive) {
    int64_t len = alpha > 0 ? s.max_len : static_cast<int64_t>(p.tokens.size()) + 1;
    best_possible = std::max(best_possible, p.logprob / length_penalty(len, alpha));
  }
  bool beaten = static_cast<int>(s.finished.size()) == k && s.finished.back().score >= best_possible;
  s.done = beaten || s.alive.empty() || s.steps >= s.max_len;
}

// Whether this step ends an output at its maximum length with eos (SearchOptions::eos_at_max_len).
bool eos_forced(const SentenceSearch& s, const Prefix& p, bool eos_at_max_len) {
  return eos_at_max_len && static_cast<int64_t>(p.tokens.size()) + 1 >= s.max_len;
}

// Whether a forced prefix, a forced eos or decode/constraints.h rewrites this step's log-probs.
bool constrained(const std::vector<SentenceSearch>& sentences, const Constraints& c, bool eos_at_max_len) {
  bool forced = false;
  for (const SentenceSearch& s : sentences) {
    if (s.done) continue;
    forced = forced || !s.prefix.empty();
    for (const Prefix& p : s.alive) forced = forced || eos_forced(s, p, eos_at_max_len);
  }
  return forced || c.any();
}

// Rewrites the step's log-probs by the forced prefixes and decode/constraints.h; untouched when
// neither applies, so the plain search stays exactly torch_ref.py's.
void constrain(Tensor& logp, const std::vector<SentenceSearch>& sentences, const Constraints& c,
               bool eos_at_max_len) {
  if (!constrained(sentences, c, eos_at_max_len)) return;
  std::vector<const std::vector<int32_t>*> histories;
  std::vector<int32_t> forced;
  for (const SentenceSearch& s : sentences) {
    if (s.done) continue;
    for (const Prefix& p : s.alive) {
      histories.push_back(&p.tokens);
      forced.push_back(p.tokens.size() < s.prefix.size() ? s.prefix[p.tokens.size()]
                       : eos_forced(s, p, eos_at_max_len) ? c.eos_id
                                                          : -1);
    }
  }
  constrain_rows(logp, histories, forced, c);
  // a forced eos counts log-prob 0, as transformers' ForcedEOSTokenLogitsProcessor sets it
  float* p = logp.data<float>();
  const int64_t V = logp.size(1);
  int64_t row = 0;
  for (const SentenceSearch& s : sentences) {
    if (s.done) continue;
    for (const Prefix& q : s.alive) {
      if (q.tokens.size() >= s.prefix.size() && eos_forced(s, q, eos_at_max_len)) p[row * V + c.eos_id] = 0.0f;
      ++row;
    }
  }
}

}  // namespace

SentenceSearch start_sentence(int64_t row, int64_t max_len, std::vector<int32_t> prefix) {
  SentenceSearch s;
  s.alive.push_back({{}, 0.0, row});
  s.max_len = max_len;
  s.prefix = std::move(prefix);
  return s;
}

void check_prefix(const std::vector<int32_t>& prefix, int64_t vocab, int32_t eos, uint64_t sentence) {
  for (int32_t t : prefix)
    check(t >= 0 && t < vocab && t != eos, "search: sentence ", sentence, ": prefix id ", t,
          " is eos or not in the target vocabulary of ", vocab);
}

int64_t max_len_of(int64_t positions, int64_t source_len, size_t prefix_len, const SearchOptions& o) {
  int64_t n = o.max_len;
  if (n > 0) {
    check(n <= positions, "search: max_len ", n, " beyond the model's positions (max_len ", positions,
          " in its config)");
  } else {
    n = std::max<int64_t>(1, static_cast<int64_t>(std::floor(o.max_len_a * static_cast<double>(source_len))) + o.max_len_b);
  }
  n = std::max<int64_t>(n, static_cast<int64_t>(prefix_len) + 1);
  check(static_cast<int64_t>(prefix_len) < positions, "search: a target prefix of ", prefix_len,
        " tokens leaves no room in the model's ", positions, " positions");
  return std::min<int64_t>(n, positions);
}

bool search_step(RowDecoder& decoder, std::vector<SentenceSearch>& sentences, const SearchOptions& o,
                 const Constraints& constraints) {
  // Feed the last token of every live prefix (bos first), one decoder row each.
  std::vector<int32_t> tokens;
  for (const SentenceSearch& s : sentences) {
    if (s.done) continue;
    for (const Prefix& p : s.alive) tokens.push_back(p.tokens.empty() ? decoder.bos_id : p.tokens.back());
  }
  if (tokens.empty()) return false;
  // The k best of each row; straight from the logits when nothing rewrites the log-probs.
  std::vector<TopK> best(tokens.size());
  const bool hf = o.rules != SearchRules::attn;  // transformers' or CTranslate2's
  const int proposals = hf ? 2 * o.beam : o.beam;  // each live prefix's
  if (decoder.step_logits && !constrained(sentences, constraints, o.eos_at_max_len)) {
    decoder.step_logits(tokens, [&](int64_t first, const Tensor& logits) { top_k_rows(logits, proposals, true, first, best); });
  } else {
    Tensor logp = decoder.step(tokens);  // [rows, tgt_vocab]
    constrain(logp, sentences, constraints, o.eos_at_max_len);
    top_k_rows(logp, proposals, false, 0, best);
  }
  // Advance each sentence; the survivors' parents are the rows kept for the next step.
  std::vector<int64_t> rows;
  bool same_sources = true;  // each sentence keeps as many rows as it had
  for (SentenceSearch& s : sentences) {
    if (s.done) continue;
    size_t before = s.alive.size();
    s.steps += 1;
    if (o.rules == SearchRules::ctranslate2 && s.steps >= s.max_len) end_ctranslate2(s, best, o.beam, o.length_penalty, decoder.eos_id);
    else if (hf) advance_transformers(s, best, o.beam, o.length_penalty, decoder.eos_id,
                                      o.early_stopping || o.rules == SearchRules::ctranslate2);
    else advance(s, best, o.beam, o.length_penalty, decoder.eos_id);
    same_sources = same_sources && !s.done && s.alive.size() == before;
    if (s.done) continue;
    for (Prefix& p : s.alive) {
      rows.push_back(p.row);
      p.row = static_cast<int64_t>(rows.size()) - 1;
    }
  }
  if (rows.empty()) return false;
  bool identity = rows.size() == tokens.size();
  for (size_t r = 0; identity && r < rows.size(); ++r) identity = rows[r] == static_cast<int64_t>(r);
  if (!identity) decoder.select_rows(rows, same_sources);
  return true;
}

Constraints constraints_of(const SearchOptions& o, int32_t eos) {
  Constraints c{o.min_len, o.no_repeat_ngram, o.repetition_penalty, eos};
  c.suppressed = o.suppress;
  c.renormalize = o.renormalize;
  return c;
}

std::vector<Hypothesis> results(const SentenceSearch& s, const SearchOptions& o) {
  std::vector<Hypothesis> out = s.finished;
  // attn: the live prefixes stand in when nothing finished; transformers' finalize: they compete
  // unless the stopping rule ended the search
  const bool hf = o.rules != SearchRules::attn;
  if (out.empty() || (hf && !s.stopped)) {
    for (const Prefix& p : s.alive)
      out.push_back({p.tokens, p.logprob,
                     p.logprob / length_normaliser(static_cast<int64_t>(p.tokens.size()), o.length_penalty, o.rules),
                     false});
    std::stable_sort(out.begin(), out.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  }
  if (static_cast<int>(out.size()) > o.n_best) out.resize(static_cast<size_t>(o.n_best));
  return out;
}

}  // namespace attn::detail
