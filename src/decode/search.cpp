#include "attn/decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/decode/constraints.h"
#include "attn/decode/sampling.h"
#include "attn/error.h"
#include "attn/parallel.h"

namespace attn {
namespace {

struct Prefix {
  std::vector<int32_t> tokens;  // generated so far (no bos)
  double logprob = 0.0;
  int64_t row = 0;  // its row in the decoder's batch
};

// One sentence's search: the live beam and the finished list.
struct SentenceSearch {
  std::vector<Prefix> alive;
  std::vector<Hypothesis> finished;
  int64_t max_len = 0;
  bool done = false;
};

struct Candidate {
  size_t parent;  // index into alive
  int32_t token;
  double logprob;  // the parent's plus this token's
};

// The k best (value, index) of row[0..V), best first; equal values: lower index first.
std::vector<std::pair<float, int32_t>> top_k(const float* row, int64_t V, int k) {
  std::vector<std::pair<float, int32_t>> best;  // kept sorted, best first
  best.reserve(static_cast<size_t>(k) + 1);
  for (int64_t v = 0; v < V; ++v) {
    if (static_cast<int>(best.size()) == k && !(row[v] > best.back().first)) continue;
    auto at = std::find_if(best.begin(), best.end(), [&](const auto& b) { return row[v] > b.first; });
    best.insert(at, {row[v], static_cast<int32_t>(v)});
    if (static_cast<int>(best.size()) > k) best.pop_back();
  }
  return best;
}

using TopK = std::vector<std::pair<float, int32_t>>;

// The k best tokens of every row of the step's log-probs [rows, V], rows split over the threads.
std::vector<TopK> top_k_rows(const Tensor& logp, int k) {
  const int64_t rows = logp.size(0), V = logp.size(1);
  std::vector<TopK> best(static_cast<size_t>(rows));
  const float* p = logp.data<float>();
  RegionErrors errors;
#pragma omp parallel for schedule(static) if (rows * V >= (1 << 16))
  for (int64_t r = 0; r < rows; ++r) errors.guard([&] { best[static_cast<size_t>(r)] = top_k(p + r * V, V, k); });
  errors.rethrow();
  return best;
}

// One step of torch_ref.py's beam_search for one sentence, given the k best tokens of every row
// of the step's log-probs; `steps` is the number of steps taken including this one.
void advance(SentenceSearch& s, const std::vector<TopK>& best, int k, double alpha, int32_t eos, int64_t steps) {
  // Each live prefix proposes its k best next tokens.
  std::vector<Candidate> cands;
  for (size_t j = 0; j < s.alive.size(); ++j)
    for (const auto& [value, token] : best[static_cast<size_t>(s.alive[j].row)])
      if (value != -std::numeric_limits<float>::infinity())  // banned (decode/constraints.h)
        cands.push_back({j, token, s.alive[j].logprob + static_cast<double>(value)});
  std::stable_sort(cands.begin(), cands.end(),
                   [](const Candidate& a, const Candidate& b) { return a.logprob > b.logprob; });
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
  std::stable_sort(s.finished.begin(), s.finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (static_cast<int>(s.finished.size()) > k) s.finished.resize(static_cast<size_t>(k));
  s.alive = std::move(alive);
  // An unfinished prefix can only lose log-prob; with alpha > 0 its penalty can still grow.
  double best_possible = -1e30;
  for (const Prefix& p : s.alive) {
    int64_t len = alpha > 0 ? s.max_len : static_cast<int64_t>(p.tokens.size()) + 1;
    best_possible = std::max(best_possible, p.logprob / length_penalty(len, alpha));
  }
  bool beaten = static_cast<int>(s.finished.size()) == k && s.finished.back().score >= best_possible;
  s.done = beaten || s.alive.empty() || steps >= s.max_len;
}

// The n best at the end; the live prefixes stand in when nothing finished.
std::vector<Hypothesis> results(const SentenceSearch& s, double alpha, int n_best) {
  std::vector<Hypothesis> out = s.finished;
  if (out.empty()) {
    for (const Prefix& p : s.alive)
      out.push_back({p.tokens, p.logprob,
                     p.logprob / length_penalty(static_cast<int64_t>(p.tokens.size()), alpha)});
    std::stable_sort(out.begin(), out.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  }
  if (static_cast<int>(out.size()) > n_best) out.resize(static_cast<size_t>(n_best));
  return out;
}

// A sentence's maximum output length: max_len, else a x source length + b (the paper's + 50 by
// default); at least the prefix + 1; within the positions the decoder has.
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

}  // namespace

double length_penalty(int64_t len, double alpha) {
  return std::pow((5.0 + static_cast<double>(len)) / 6.0, alpha);
}

namespace {

const std::vector<int32_t> kNoPrefix;

// Rewrites the step's log-probs by the forced prefixes and decode/constraints.h; untouched when
// neither applies, so the plain search stays exactly torch_ref.py's.
void constrain(Tensor& logp, const std::vector<SentenceSearch>& sentences, const SentenceInputs& in,
               const Constraints& c) {
  if (in.prefixes.empty() && !c.any()) return;
  std::vector<const std::vector<int32_t>*> histories;
  std::vector<int32_t> forced;
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (sentences[i].done) continue;
    const std::vector<int32_t>& prefix = in.prefixes.empty() ? kNoPrefix : in.prefixes[i];
    for (const Prefix& p : sentences[i].alive) {
      histories.push_back(&p.tokens);
      forced.push_back(p.tokens.size() < prefix.size() ? prefix[p.tokens.size()] : -1);
    }
  }
  constrain_rows(logp, histories, forced, c);
}

std::vector<std::vector<Hypothesis>> run_search(RowDecoder& decoder, const std::vector<int64_t>& max_lens,
                                                const SearchOptions& o, const SentenceInputs& in) {
  const Constraints constraints{o.min_len, o.no_repeat_ngram, o.repetition_penalty, decoder.eos_id};
  std::vector<SentenceSearch> sentences(max_lens.size());
  for (size_t i = 0; i < max_lens.size(); ++i) {
    sentences[i].alive.push_back({{}, 0.0, static_cast<int64_t>(i)});
    sentences[i].max_len = max_lens[i];
  }
  for (int64_t steps = 1;; ++steps) {
    // Feed the last token of every live prefix (bos first), one decoder row each.
    std::vector<int32_t> tokens;
    for (const SentenceSearch& s : sentences) {
      if (s.done) continue;
      for (const Prefix& p : s.alive) tokens.push_back(p.tokens.empty() ? decoder.bos_id : p.tokens.back());
    }
    Tensor logp = decoder.step(tokens);  // [rows, tgt_vocab]
    constrain(logp, sentences, in, constraints);
    const std::vector<TopK> best = top_k_rows(logp, o.beam);
    // Advance each sentence; the survivors' parents are the rows kept for the next step.
    std::vector<int64_t> rows;
    bool same_sources = true;  // each sentence keeps as many rows as it had
    for (SentenceSearch& s : sentences) {
      if (s.done) continue;
      size_t before = s.alive.size();
      advance(s, best, o.beam, o.length_penalty, decoder.eos_id, steps);
      same_sources = same_sources && !s.done && s.alive.size() == before;
      if (s.done) continue;
      for (Prefix& p : s.alive) {
        rows.push_back(p.row);
        p.row = static_cast<int64_t>(rows.size()) - 1;
      }
    }
    if (rows.empty()) break;
    bool identity = rows.size() == tokens.size();
    for (size_t r = 0; identity && r < rows.size(); ++r) identity = rows[r] == static_cast<int64_t>(r);
    if (!identity) decoder.select_rows(rows, same_sources);
  }
  std::vector<std::vector<Hypothesis>> out;
  for (const SentenceSearch& s : sentences) out.push_back(results(s, o.length_penalty, o.n_best));
  return out;
}

std::vector<int64_t> lengths_of(const std::vector<std::vector<int32_t>>& sources) {
  std::vector<int64_t> lengths;
  for (const auto& s : sources) lengths.push_back(static_cast<int64_t>(s.size()));
  return lengths;
}

}  // namespace

void check_search_options(const SearchOptions& o, int64_t vocab) {
  check(o.beam >= 1 && o.beam <= vocab, "search: beam must be in [1, the target vocabulary = ", vocab, "], got ",
        o.beam);
  const SamplingOptions& s = o.sampling;
  if (s.on) {
    check(o.beam == 1, "search: sampling draws one token per output: beam must be 1, got ", o.beam);
    check(o.n_best >= 1, "search: n_best (samples) must be at least 1, got ", o.n_best);
    check(s.top_k >= 0, "search: sampling top_k must be >= 0, got ", s.top_k);
    check(s.top_p > 0 && s.top_p <= 1, "search: sampling top_p must be in (0, 1], got ", s.top_p);
    check(s.temperature > 0 && std::isfinite(s.temperature), "search: sampling temperature must be > 0, got ",
          s.temperature);
  } else {
    check(o.n_best >= 1 && o.n_best <= o.beam, "search: n_best must be in [1, beam = ", o.beam, "], got ", o.n_best);
  }
  check(o.repetition_penalty > 0 && std::isfinite(o.repetition_penalty),
        "search: repetition_penalty must be > 0, got ", o.repetition_penalty);
  check(o.no_repeat_ngram >= 0 && o.min_len >= 0 && o.max_len >= 0,
        "search: no_repeat_ngram, min_len and max_len must be >= 0");
  check(std::isfinite(o.max_len_a) && o.max_len_a >= 0, "search: max_len_a must be >= 0, got ", o.max_len_a);
}

std::vector<std::vector<Hypothesis>> search(RowDecoder& decoder, const std::vector<int64_t>& source_lengths,
                                            const SearchOptions& o, const SentenceInputs& in) {
  check_search_options(o, decoder.tgt_vocab);
  const size_t n = source_lengths.size();
  check(in.prefixes.empty() || in.prefixes.size() == n, "search: ", in.prefixes.size(), " prefixes for ", n,
        " sentences");
  check(in.keys.empty() || in.keys.size() == n, "search: ", in.keys.size(), " keys for ", n, " sentences");
  check(in.allowed.empty() || in.allowed.size() == n, "search: ", in.allowed.size(), " allowed lists for ", n,
        " sentences");
  std::vector<int64_t> max_lens;
  for (size_t i = 0; i < n; ++i) {
    const size_t prefix = in.prefixes.empty() ? 0 : in.prefixes[i].size();
    if (prefix > 0)
      for (int32_t t : in.prefixes[i])
        check(t >= 0 && t < decoder.tgt_vocab && t != decoder.eos_id, "search: sentence ", i + 1, ": prefix id ", t,
              " is eos or not in the target vocabulary of ", decoder.tgt_vocab);
    max_lens.push_back(max_len_of(decoder.max_len, source_lengths[i], prefix, o));
  }
  NoGrad no_grad;
  if (o.sampling.on) return sample_translations(decoder, max_lens, o, in);
  return run_search(decoder, max_lens, o, in);
}

std::vector<std::vector<Hypothesis>> search(const Transformer& m,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o, const SentenceInputs& in) {
  check_search_options(o, m.config.tgt_vocab);
  if (sources.empty()) return {};
  RowDecoder decoder = start_row_decoder(m, sources, o.use_cache, in.allowed);
  return search(decoder, lengths_of(sources), o, in);
}

std::vector<std::vector<Hypothesis>> search(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o, const SentenceInputs& in) {
  check_search_options(o, m.common().tgt_vocab);
  if (sources.empty()) return {};
  RowDecoder decoder = start_row_decoder(m, sources, o.use_cache, in.allowed);
  return search(decoder, lengths_of(sources), o, in);
}

}  // namespace attn
