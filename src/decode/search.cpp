#include "attn/decode/search.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "attn/decode/batch.h"
#include "attn/decode/rnn_step_decoder.h"
#include "attn/decode/step_decoder.h"
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

int64_t max_len_of(int64_t model_max_len, const std::vector<int32_t>& source, const SearchOptions& o) {
  if (o.max_len > 0) {
    check(o.max_len <= model_max_len, "search: max_len ", o.max_len,
          " beyond the model's positions (max_len ", model_max_len, " in its config)");
    return o.max_len;
  }
  // The paper's input length + 50, within the positions the model has.
  return std::min<int64_t>(static_cast<int64_t>(source.size()) + 50, model_max_len);
}

}  // namespace

double length_penalty(int64_t len, double alpha) {
  return std::pow((5.0 + static_cast<double>(len)) / 6.0, alpha);
}

namespace {

// The decoder as the loop below drives it, whatever the model: feed one token per row and get
// log-probs [rows, V]; keep rows (see step_decoder.h and rnn_step_decoder.h).
struct RowDecoder {
  std::function<Tensor(const std::vector<int32_t>&)> step;
  std::function<void(const std::vector<int64_t>&, bool)> select_rows;
};

std::vector<std::vector<Hypothesis>> run_search(RowDecoder& decoder, const std::vector<int64_t>& max_lens,
                                                int32_t bos, int32_t eos, const SearchOptions& o) {
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
      for (const Prefix& p : s.alive) tokens.push_back(p.tokens.empty() ? bos : p.tokens.back());
    }
    const std::vector<TopK> best = top_k_rows(decoder.step(tokens), o.beam);  // of log-probs [rows, tgt_vocab]
    // Advance each sentence; the survivors' parents are the rows kept for the next step.
    std::vector<int64_t> rows;
    bool same_sources = true;  // each sentence keeps as many rows as it had
    for (SentenceSearch& s : sentences) {
      if (s.done) continue;
      size_t before = s.alive.size();
      advance(s, best, o.beam, o.length_penalty, eos, steps);
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

void check_options(const SearchOptions& o, int64_t vocab) {
  check(o.beam >= 1 && o.beam <= vocab, "search: beam must be in [1, the target vocabulary = ", vocab, "], got ",
        o.beam);
  check(o.n_best >= 1 && o.n_best <= o.beam, "search: n_best must be in [1, beam = ", o.beam, "], got ", o.n_best);
}

}  // namespace

std::vector<std::vector<Hypothesis>> search(const Transformer& m,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o) {
  const TransformerConfig& c = m.config;
  check_options(o, c.tgt_vocab);
  if (sources.empty()) return {};
  NoGrad no_grad;
  Tensor src = pad_ids(sources, c.pad_id);  // [batch, src_len]
  Tensor src_pad = padding_mask(src, c.pad_id);
  Tensor memory = encode_real_positions(m, src);  // [batch, src_len, d_model]
  StepDecoder decoder = start_step_decoder(m, memory, src_pad, o.use_cache);
  RowDecoder rows{[&](const std::vector<int32_t>& t) { return step(decoder, t); },
                  [&](const std::vector<int64_t>& r, bool same) { select_rows(decoder, r, same); }};
  std::vector<int64_t> max_lens;
  for (const auto& s : sources) max_lens.push_back(max_len_of(m.config.max_len, s, o));
  return run_search(rows, max_lens, c.bos_id, c.eos_id, o);
}

std::vector<std::vector<Hypothesis>> search(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o) {
  if (const auto* transformer = std::get_if<Transformer>(&m.net)) return search(*transformer, sources, o);
  const RnnSeq2Seq& rnn = std::get<RnnSeq2Seq>(m.net);
  const RnnConfig& c = rnn.config;
  check_options(o, c.tgt_vocab);
  if (sources.empty()) return {};
  // The RNN keeps no per-position cache: use_cache does not apply.
  RnnStepDecoder decoder = start_rnn_step_decoder(rnn, pad_ids(sources, c.pad_id));
  RowDecoder rows{[&](const std::vector<int32_t>& t) { return step(decoder, t); },
                  [&](const std::vector<int64_t>& r, bool same) { select_rows(decoder, r, same); }};
  std::vector<int64_t> max_lens;
  for (const auto& s : sources) max_lens.push_back(max_len_of(c.max_len, s, o));
  return run_search(rows, max_lens, c.bos_id, c.eos_id, o);
}

}  // namespace attn
