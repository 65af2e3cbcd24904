#include "attn/decode/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attn/decode/constraints.h"
#include "search_steps.h"
#include "attn/error.h"
#include "attn/parallel.h"

namespace attn {
namespace {

// SplitMix64's finaliser: a bijection of 64-bit words whose outputs look independent.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One output being sampled: sentence, sample index, tokens so far.
struct Sample {
  size_t sentence = 0;
  uint64_t index = 0;
  std::vector<int32_t> tokens;
  double logprob = 0.0;
  bool finished = false;  // ended with eos
};

// The next token of row r's sample, and the log-prob it was drawn from.
std::pair<int32_t, float> next_token(const float* row, int64_t V, int32_t forced, const SamplingOptions& o,
                                     uint64_t key, uint64_t index, uint64_t step) {
  if (forced >= 0) return {forced, row[forced]};
  const int32_t t = draw(sampling_distribution(row, V, o), stream_uniform(o.seed, key, index, step));
  return {t, row[t]};
}

// The next token of every live sample (row r: samples[live[r]]) and the log-prob it was drawn
// from. A row's draw depends only on its own log-probs and stream: rows split over the threads.
std::vector<std::pair<int32_t, float>> draw_rows(const Tensor& logp, const std::vector<Sample>& samples,
                                                 const std::vector<size_t>& live, const std::vector<int32_t>& forced,
                                                 const std::vector<uint64_t>& keys, const SamplingOptions& o,
                                                 uint64_t step) {
  const float* p = logp.data<float>();
  const int64_t R = logp.size(0), V = logp.size(1);
  std::vector<std::pair<int32_t, float>> drawn(static_cast<size_t>(R));
  for_each_index(R, R * V >= (1 << 16), [&](int64_t r) {
    const size_t i = static_cast<size_t>(r);
    const Sample& s = samples[live[i]];
    const uint64_t key = keys.empty() ? s.sentence : keys[s.sentence];
    drawn[i] = next_token(p + r * V, V, forced[i], o, key, s.index, step);
  });
  return drawn;
}

// The samples of each sentence, best first by score = logprob / lp(len), len counting the eos.
std::vector<std::vector<Hypothesis>> sorted_results(const std::vector<Sample>& samples, size_t sentences,
                                                    double alpha) {
  std::vector<std::vector<Hypothesis>> out(sentences);
  for (const Sample& s : samples) {
    const int64_t len = static_cast<int64_t>(s.tokens.size()) + (s.finished ? 1 : 0);
    out[s.sentence].push_back({s.tokens, s.logprob, s.logprob / length_penalty(len, alpha), s.finished});
  }
  for (auto& hyps : out)
    std::stable_sort(hyps.begin(), hyps.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  return out;
}

}  // namespace

double stream_uniform(uint64_t seed, uint64_t key, uint64_t sample, uint64_t step) {
  uint64_t h = mix(mix(mix(mix(seed) ^ key) ^ sample) ^ step);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

std::vector<std::pair<int32_t, double>> sampling_distribution(const float* logp, int64_t V, const SamplingOptions& o) {
  std::vector<int32_t> order;  // the tokens that may be drawn
  float top = -std::numeric_limits<float>::infinity();
  for (int64_t v = 0; v < V; ++v)
    if (std::isfinite(logp[v])) {
      order.push_back(static_cast<int32_t>(v));
      top = std::max(top, logp[v]);
    }
  check(!order.empty(), "sampling: every token is banned");
  // Most probable first; equal log-probs: lower id first. Only a cut needs the order, so a plain
  // draw (no top-k, no top-p) sorts nothing.
  auto better = [&](int32_t a, int32_t b) { return logp[a] > logp[b] || (logp[a] == logp[b] && a < b); };
  auto sort_first = [&](size_t m) {
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(m), order.end(), better);
  };
  if (o.top_k > 0 && static_cast<size_t>(o.top_k) < order.size()) {
    sort_first(static_cast<size_t>(o.top_k));
    order.resize(static_cast<size_t>(o.top_k));
  }
  // p_T up to a common factor: exp((log p - max) / T), in double.
  auto weight = [&](int32_t t) { return std::exp((static_cast<double>(logp[t]) - top) / o.temperature); };
  double total = 0.0;
  for (int32_t t : order) total += weight(t);
  size_t keep = order.size();
  if (o.top_p < 1.0) {
    // Nucleus: the fewest most probable tokens whose probability reaches top_p. The most probable
    // are sorted 64 at a time, 4x more while they fall short (a nucleus is usually small).
    for (size_t m = std::min<size_t>(64, order.size());; m = std::min(order.size(), m * 4)) {
      sort_first(m);
      double cumulative = 0.0;
      for (keep = 0; keep < m;) {
        cumulative += weight(order[keep++]) / total;
        if (cumulative >= o.top_p) break;
      }
      if (cumulative >= o.top_p || m == order.size()) break;
    }
  }
  std::vector<std::pair<int32_t, double>> dist;
  double kept = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    dist.emplace_back(order[i], weight(order[i]));
    kept += dist.back().second;
  }
  for (auto& d : dist) d.second /= kept;
  return dist;
}

int32_t draw(const std::vector<std::pair<int32_t, double>>& dist, double u) {
  check(!dist.empty(), "draw: an empty distribution");
  double cumulative = 0.0;
  for (const auto& [token, p] : dist) {
    cumulative += p;
    if (u < cumulative) return token;
  }
  return dist.back().first;  // u within rounding of 1
}

std::vector<std::vector<Hypothesis>> sample_translations(RowDecoder& decoder, const std::vector<int64_t>& max_lens,
                                                         const SearchOptions& o, const SentenceInputs& in) {
  const Constraints constraints = detail::constraints_of(o, decoder.eos_id);
  // n_best rows per sentence: row s * n_best + i is sample i of sentence s.
  std::vector<Sample> samples;
  std::vector<int64_t> rows;
  for (size_t s = 0; s < max_lens.size(); ++s)
    for (int i = 0; i < o.n_best; ++i) {
      samples.push_back({s, static_cast<uint64_t>(i), {}, 0.0, false});
      rows.push_back(static_cast<int64_t>(s));
    }
  if (o.n_best > 1) decoder.select_rows(rows, false);
  std::vector<size_t> live(samples.size());  // the samples still going, one decoder row each
  std::iota(live.begin(), live.end(), size_t{0});
  for (uint64_t step = 0; !live.empty(); ++step) {
    std::vector<int32_t> tokens, forced;
    std::vector<const std::vector<int32_t>*> histories;
    for (size_t j : live) {
      const Sample& s = samples[j];
      tokens.push_back(s.tokens.empty() ? decoder.bos_id : s.tokens.back());
      const std::vector<int32_t>* prefix = in.prefixes.empty() ? nullptr : &in.prefixes[s.sentence];
      forced.push_back(prefix && s.tokens.size() < prefix->size() ? (*prefix)[s.tokens.size()] : -1);
      histories.push_back(&s.tokens);
    }
    Tensor logp = decoder.step(tokens);  // [rows, V]
    constrain_rows(logp, histories, forced, constraints);
    const std::vector<std::pair<int32_t, float>> drawn = draw_rows(logp, samples, live, forced, in.keys, o.sampling, step);
    std::vector<int64_t> kept;
    std::vector<size_t> still;
    for (size_t r = 0; r < live.size(); ++r) {
      Sample& s = samples[live[r]];
      const auto [token, value] = drawn[r];
      s.logprob += static_cast<double>(value);
      if (token == decoder.eos_id) {
        s.finished = true;
        continue;
      }
      s.tokens.push_back(token);
      if (static_cast<int64_t>(s.tokens.size()) >= max_lens[s.sentence]) continue;
      kept.push_back(static_cast<int64_t>(r));
      still.push_back(live[r]);
    }
    if (!still.empty() && still.size() != live.size()) decoder.select_rows(kept, false);
    live = std::move(still);
  }
  return sorted_results(samples, max_lens.size(), o.length_penalty);
}

}  // namespace attn
