// Sampling (decode/sampling.h) on the fixture model post_shared_l2_h4 against PyTorch:
//   - 5,000 sampled first tokens follow torch_ref.py's softmax (tests/fixtures/decode/first_step.txt,
//     made by make_decode_fixtures.py): a chi-square test, p > 0.01; the same with temperature 0.7 and
//     top-k 5, and with top-p 0.8, against the probabilities recomputed here from PyTorch's;
//   - top-k and top-p keep exactly the right tokens (computed here by sorting), renormalised;
//   - top-k 1 is greedy decoding (torch_ref.py's greedy.txt);
//   - the same seed gives the same outputs at 1 and 2 threads and at batch 1 and 32; another
//     seed gives others; the same on a stand-in decoder of 5,000 tokens, where the draws run on
//     the threads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include <gtest/gtest.h>

#include "attn/decode/sampling.h"
#include "attn/decode/search.h"
#include "attn/models/rnn_seq2seq.h"
#include "attn/models/seq2seq.h"
#include "attn/ops/softmax.h"
#include "attn/runtime.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_model;

const char* kModel = "post_shared_l2_h4";

std::vector<double> torch_first_step() {
  std::ifstream in(std::string(ATTN_TEST_DATA) + "/decode/first_step.txt");
  std::vector<double> p;
  for (double x; in >> x;) p.push_back(x);
  return p;
}

// Q(a, x), the regularised upper incomplete gamma function (Numerical Recipes' gammq): the
// chi-square test's p-value is Q(dof / 2, chi2 / 2).
double gamma_q(double a, double x) {
  const double gln = std::lgamma(a);
  if (x < a + 1) {  // the series of P, Q = 1 - P
    double ap = a, del = 1.0 / a, sum = del;
    for (int n = 0; n < 1000; ++n) {
      del *= x / ++ap;
      sum += del;
      if (std::fabs(del) < std::fabs(sum) * 1e-15) break;
    }
    return 1.0 - sum * std::exp(-x + a * std::log(x) - gln);
  }
  double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;  // Lentz's continued fraction of Q
  for (int i = 1; i < 1000; ++i) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = std::fabs(d) < 1e-300 ? 1e-300 : d;
    c = b + an / c;
    c = std::fabs(c) < 1e-300 ? 1e-300 : c;
    d = 1 / d;
    h *= d * c;
    if (std::fabs(d * c - 1) < 1e-15) break;
  }
  return std::exp(-x + a * std::log(x) - gln) * h;
}

// Pearson's chi-square p-value of observed counts against probabilities; tokens expected fewer
// than 5 times are pooled into one cell (pooled into the smallest cell if the pool is short of 5).
double chi_square_p(const std::map<int32_t, int>& counts, const std::vector<double>& p, int n) {
  std::vector<std::pair<double, double>> cells;  // (expected, observed)
  double pool_e = 0, pool_o = 0;
  for (size_t t = 0; t < p.size(); ++t) {
    const double e = p[t] * n;
    const double o = counts.count(static_cast<int32_t>(t)) ? counts.at(static_cast<int32_t>(t)) : 0;
    if (e >= 5) {
      cells.push_back({e, o});
    } else {
      pool_e += e;
      pool_o += o;
    }
  }
  if (pool_e >= 5) {
    cells.push_back({pool_e, pool_o});
  } else {
    std::sort(cells.begin(), cells.end());
    cells.front().first += pool_e;
    cells.front().second += pool_o;
  }
  double chi2 = 0;
  for (const auto& [e, o] : cells) chi2 += (o - e) * (o - e) / e;
  const double dof = static_cast<double>(cells.size()) - 1;
  std::printf("chi-square %.2f over %zu cells, p = %.3f\n", chi2, cells.size(), gamma_q(dof / 2, chi2 / 2));
  return gamma_q(dof / 2, chi2 / 2);
}

// The first token of n samples of line 1 of src.txt (max_len 1: one step; eos counts as 2).
std::map<int32_t, int> first_tokens(const SamplingOptions& sampling, int n) {
  const Transformer& m = fixture_model(kModel);
  const std::vector<int32_t> source = fixture_ids(kModel, "src.txt").front();
  SearchOptions o;
  o.beam = 1;
  o.max_len = 1;
  o.sampling = sampling;
  std::map<int32_t, int> counts;
  for (int at = 0; at < n; at += 1000) {
    std::vector<std::vector<int32_t>> sources(1000, source);
    SentenceInputs in;
    for (int i = 0; i < 1000; ++i) in.keys.push_back(static_cast<uint64_t>(at + i));
    for (const auto& hyps : search(m, sources, o, in)) counts[hyps.front().tokens.empty() ? m.config.eos_id : hyps.front().tokens[0]]++;
  }
  return counts;
}

TEST(Sampling, FirstTokensFollowTorchSoftmax) {
  const std::vector<double> p = torch_first_step();
  ASSERT_EQ(p.size(), 48u);
  SamplingOptions s;
  s.on = true;
  s.seed = 11;
  const std::map<int32_t, int> counts = first_tokens(s, 5000);
  EXPECT_GT(chi_square_p(counts, p, 5000), 0.01);
  EXPECT_GE(counts.size(), 20u);  // a real spread, not a few tokens
}

TEST(Sampling, TemperatureAndTopKFollowTorchSoftmax) {
  const std::vector<double> p = torch_first_step();
  SamplingOptions s;
  s.on = true;
  s.seed = 12;
  s.temperature = 0.7;
  s.top_k = 5;
  // Expected: p^(1/T) over the 5 most probable, renormalised (from PyTorch's p, not attn's).
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  std::vector<double> q(p.size(), 0.0);
  double total = 0;
  for (size_t i = 0; i < 5; ++i) total += q[order[i]] = std::pow(p[order[i]], 1 / 0.7);
  for (double& x : q) x /= total;
  const std::map<int32_t, int> counts = first_tokens(s, 5000);
  for (const auto& [token, n] : counts) EXPECT_GT(q[static_cast<size_t>(token)], 0) << "token " << token << " outside the top 5";
  EXPECT_EQ(counts.size(), 5u);
  EXPECT_GT(chi_square_p(counts, q, 5000), 0.01);
}

TEST(Sampling, TopPFollowsTorchSoftmaxWithinTheNucleus) {
  const std::vector<double> p = torch_first_step();
  SamplingOptions s;
  s.on = true;
  s.seed = 13;
  s.top_p = 0.8;
  // Expected: PyTorch's p over the fewest most probable tokens reaching 0.8, renormalised.
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  std::vector<double> q(p.size(), 0.0);
  double total = 0;
  for (size_t i = 0; total < 0.8; ++i) total += q[order[i]] = p[order[i]];
  size_t nucleus = 0;
  for (double& x : q) nucleus += (x /= total) > 0;
  const std::map<int32_t, int> counts = first_tokens(s, 5000);
  for (const auto& [token, n] : counts) EXPECT_GT(q[static_cast<size_t>(token)], 0) << "token " << token << " outside the nucleus";
  EXPECT_EQ(counts.size(), nucleus);
  EXPECT_GT(chi_square_p(counts, q, 5000), 0.01);
}

// The tokens of a distribution, as a set.
std::vector<int32_t> tokens_of(const std::vector<std::pair<int32_t, double>>& dist) {
  std::vector<int32_t> t;
  for (const auto& d : dist) t.push_back(d.first);
  std::sort(t.begin(), t.end());
  return t;
}

TEST(Sampling, TopKAndTopPKeepExactlyTheRightTokens) {
  // A constructed row: probabilities 0.05, 0.4, 0.1, 0.3, 0.15 (ids 0..4).
  const std::vector<double> probs = {0.05, 0.4, 0.1, 0.3, 0.15};
  std::vector<float> logp;
  for (double x : probs) logp.push_back(static_cast<float>(std::log(x)));
  SamplingOptions o;
  o.on = true;
  auto dist = [&](int k, double p) {
    o.top_k = k;
    o.top_p = p;
    return sampling_distribution(logp.data(), 5, o);
  };
  EXPECT_EQ(tokens_of(dist(0, 1.0)), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(tokens_of(dist(1, 1.0)), (std::vector<int32_t>{1}));
  EXPECT_EQ(tokens_of(dist(2, 1.0)), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(tokens_of(dist(3, 1.0)), (std::vector<int32_t>{1, 3, 4}));
  EXPECT_EQ(tokens_of(dist(0, 0.39)), (std::vector<int32_t>{1}));        // 0.4 reaches 0.39
  EXPECT_EQ(tokens_of(dist(0, 0.41)), (std::vector<int32_t>{1, 3}));     // 0.4 + 0.3
  EXPECT_EQ(tokens_of(dist(0, 0.71)), (std::vector<int32_t>{1, 3, 4}));  // + 0.15 = 0.85
  EXPECT_EQ(tokens_of(dist(0, 0.86)), (std::vector<int32_t>{1, 2, 3, 4}));
  // Top-p acts on the top-k's renormalised probabilities: 0.4/0.7 = 0.57 reaches 0.5, not 0.6.
  EXPECT_EQ(tokens_of(dist(2, 0.5)), (std::vector<int32_t>{1}));
  EXPECT_EQ(tokens_of(dist(2, 0.6)), (std::vector<int32_t>{1, 3}));
  // Renormalised: 0.4 and 0.3 over 0.7 for top-k 2.
  auto two = dist(2, 1.0);
  EXPECT_NEAR(two[0].second, 0.4 / 0.7, 1e-6);
  EXPECT_NEAR(two[1].second, 0.3 / 0.7, 1e-6);
  // A banned token (-inf) is never in it, and draw() picks by cumulative probability.
  logp[1] = -INFINITY;
  EXPECT_EQ(tokens_of(dist(1, 1.0)), (std::vector<int32_t>{3}));
  auto all = dist(0, 1.0);  // no cut: id order, 0.05 0.1 0.3 0.15 over 0.6
  EXPECT_EQ(tokens_of(all), (std::vector<int32_t>{0, 2, 3, 4}));
  EXPECT_EQ(draw(all, 0.0), 0);
  EXPECT_EQ(draw(all, 0.2), 2);  // 0.05/0.6 = 0.083 <= 0.2 < 0.25
  EXPECT_EQ(draw(all, 0.999999), 4);
  auto cut = dist(2, 1.0);  // most probable first: 3 (0.3), 4 (0.15)
  EXPECT_EQ(draw(cut, 0.0), 3);
  EXPECT_EQ(draw(cut, 0.7), 4);  // 0.3/0.45 = 0.667 <= 0.7
}

TEST(Sampling, TopPOnTheModelKeepsTheSmallestSetReachingP) {
  const std::vector<double> p = torch_first_step();  // PyTorch's
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  std::vector<float> logp;
  for (double x : p) logp.push_back(static_cast<float>(std::log(x)));
  for (double top_p : {0.3, 0.5, 0.8, 0.9}) {
    std::vector<int32_t> expected;
    double cumulative = 0;
    for (size_t i = 0; cumulative < top_p; ++i) {
      expected.push_back(static_cast<int32_t>(order[i]));
      cumulative += p[order[i]];
    }
    std::sort(expected.begin(), expected.end());
    SamplingOptions o;
    o.on = true;
    o.top_p = top_p;
    EXPECT_EQ(tokens_of(sampling_distribution(logp.data(), 48, o)), expected) << "top_p " << top_p;
  }
}

// A nucleus of hundreds of tokens (found 64, 256, 1024 at a time) is the same set as by a full sort.
TEST(Sampling, LargeNucleusEqualsAFullSort) {
  std::vector<float> logp(3000);
  for (size_t v = 0; v < logp.size(); ++v) logp[v] = -8.0f - 0.001f * static_cast<float>((v * 7919) % 3000);
  std::vector<double> p(logp.size());
  double z = 0;
  for (size_t v = 0; v < p.size(); ++v) z += p[v] = std::exp(static_cast<double>(logp[v]));
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  for (double top_p : {0.05, 0.3, 0.9}) {
    std::vector<int32_t> expected;
    double cumulative = 0;
    for (size_t i = 0; cumulative < top_p; ++i) {
      expected.push_back(static_cast<int32_t>(order[i]));
      cumulative += p[order[i]] / z;
    }
    std::sort(expected.begin(), expected.end());
    SamplingOptions o;
    o.on = true;
    o.top_p = top_p;
    EXPECT_EQ(tokens_of(sampling_distribution(logp.data(), 3000, o)), expected) << "top_p " << top_p;
    std::printf("top_p %.2f: %zu of 3000 tokens\n", top_p, expected.size());
  }
}

TEST(Sampling, TopK1IsGreedy) {
  const Transformer& m = fixture_model(kModel);
  SearchOptions o;
  o.beam = 1;
  o.max_len = 20;
  o.sampling.on = true;
  o.sampling.top_k = 1;
  o.sampling.seed = 3;
  const auto got = search(m, fixture_ids(kModel, "src.txt"), o);
  const auto expected = fixture_ids(kModel, "greedy.txt");
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].front().tokens, expected[i]) << "line " << i + 1;
}

// Samples of src.txt twice over (48 sentences, keys 0..47) in batches of `batch`, 3 each.
std::vector<std::vector<int32_t>> samples(uint64_t seed, size_t batch) {
  const Transformer& m = fixture_model(kModel);
  std::vector<std::vector<int32_t>> src = fixture_ids(kModel, "src.txt");
  const std::vector<std::vector<int32_t>> twice = src;
  src.insert(src.end(), twice.begin(), twice.end());
  SearchOptions o;
  o.beam = 1;
  o.n_best = 3;
  o.max_len = 20;
  o.sampling = {true, 0, 0.95, 1.3, seed};
  std::vector<std::vector<int32_t>> out;
  for (size_t at = 0; at < src.size(); at += batch) {
    const size_t end = std::min(src.size(), at + batch);
    SentenceInputs in;
    for (size_t i = at; i < end; ++i) in.keys.push_back(i);
    const std::vector<std::vector<int32_t>> part(src.begin() + static_cast<std::ptrdiff_t>(at),
                                                 src.begin() + static_cast<std::ptrdiff_t>(end));
    for (const auto& hyps : search(m, part, o, in)) {
      EXPECT_EQ(hyps.size(), 3u);
      for (const Hypothesis& h : hyps) out.push_back(h.tokens);
    }
  }
  return out;
}

TEST(Sampling, SameSeedSameOutputWhateverThreadsAndBatch) {
  const int threads_before = threads();
  set_threads(1);
  const auto one_thread_batch1 = samples(7, 1);
  const auto one_thread_batch32 = samples(7, 32);
  set_threads(2);
  const auto two_threads_batch1 = samples(7, 1);
  const auto two_threads_batch32 = samples(7, 32);
  const auto other_seed = samples(8, 32);
  set_threads(threads_before);
  EXPECT_EQ(one_thread_batch1, one_thread_batch32);
  EXPECT_EQ(one_thread_batch1, two_threads_batch1);
  EXPECT_EQ(one_thread_batch1, two_threads_batch32);
  EXPECT_NE(one_thread_batch1, other_seed);
  // The first and second copies of src.txt have other keys, so (mostly) other samples.
  int same = 0;
  for (size_t i = 0; i < 72; ++i) same += one_thread_batch1[i] == one_thread_batch1[i + 72];
  EXPECT_LT(same, 60);
}

// A stand-in model over 5,000 tokens: each row's log-probs are a fixed function of its prefix (a
// hash), so they are the same whatever the batch; enough log-probs a step for the draws to run on
// the threads.
RowDecoder hashed_decoder(size_t sentences) {
  auto rows = std::make_shared<std::vector<std::vector<int32_t>>>(sentences);
  RowDecoder d;
  d.tgt_vocab = 5000;
  d.max_len = 64;
  d.step = [rows](const std::vector<int32_t>& tokens) {
    const int64_t R = static_cast<int64_t>(tokens.size()), V = 5000;
    Tensor logits = Tensor::empty({R, V});
    for (int64_t r = 0; r < R; ++r) {
      auto& h = (*rows)[static_cast<size_t>(r)];
      h.push_back(tokens[static_cast<size_t>(r)]);
      uint64_t seed = h.size();
      for (int32_t t : h) seed = seed * 1000003u + static_cast<uint64_t>(t);
      for (int64_t v = 0; v < V; ++v)
        logits.data<float>()[r * V + v] = static_cast<float>(-6.0 * stream_uniform(seed, 0, 0, static_cast<uint64_t>(v)));
    }
    Tensor logp = Tensor::empty({R, V});
    log_softmax_rows(logits.data<float>(), logp.data<float>(), R, V);
    return logp;
  };
  d.select_rows = [rows](const std::vector<int64_t>& keep, bool) {
    std::vector<std::vector<int32_t>> kept;
    for (int64_t r : keep) kept.push_back((*rows)[static_cast<size_t>(r)]);
    *rows = std::move(kept);
  };
  return d;
}

// 40 sentences, 2 samples each, in batches of `batch` (keys: their index).
std::vector<Hypothesis> hashed_samples(size_t batch, const SamplingOptions& sampling) {
  SearchOptions o;
  o.beam = 1;
  o.n_best = 2;
  o.max_len = 12;
  o.sampling = sampling;
  std::vector<Hypothesis> out;
  for (size_t at = 0; at < 40; at += batch) {
    RowDecoder d = hashed_decoder(batch);
    SentenceInputs in;
    for (size_t i = at; i < at + batch; ++i) in.keys.push_back(i);
    for (const auto& hyps : search(d, std::vector<int64_t>(batch, 5), o, in))
      out.insert(out.end(), hyps.begin(), hyps.end());
  }
  return out;
}

TEST(Sampling, ParallelDrawsAreTheSameAtAnyThreadCountAndBatch) {
  const int threads_before = threads();
  for (const SamplingOptions& s : {SamplingOptions{true, 0, 1.0, 1.0, 9}, SamplingOptions{true, 0, 0.7, 0.8, 9},
                                   SamplingOptions{true, 100, 1.0, 1.5, 9}}) {
    set_threads(1);
    const auto one = hashed_samples(40, s);
    set_threads(2);
    const auto two = hashed_samples(40, s), two_small = hashed_samples(8, s);
    ASSERT_EQ(one.size(), 80u);
    std::set<std::vector<int32_t>> distinct;
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(two[i].tokens, one[i].tokens) << i;
      EXPECT_EQ(two[i].logprob, one[i].logprob) << i;
      EXPECT_EQ(two_small[i].tokens, one[i].tokens) << i;
      distinct.insert(one[i].tokens);
    }
    EXPECT_GT(distinct.size(), 70u);  // samples, not one output repeated
  }
  set_threads(threads_before);
}

// The other decoders sample alike: the uncached Transformer gives the cached one's samples, and an
// RNN's samples do not depend on the batch either.
TEST(Sampling, UncachedAndRnnDecodersSampleAlike) {
  const Transformer& m = fixture_model(kModel);
  const auto src = fixture_ids(kModel, "src.txt");
  SearchOptions o;
  o.beam = 1;
  o.n_best = 3;
  o.max_len = 15;
  o.sampling = {true, 8, 1.0, 1.0, 21};
  const auto cached = search(m, src, o);
  o.use_cache = false;
  const auto uncached = search(m, src, o);
  RnnConfig c;
  c.src_vocab = c.tgt_vocab = 48;
  c.d_model = 16;
  c.dropout = 0;
  const Seq2Seq rnn = as_seq2seq(make_rnn_seq2seq(c, 5));
  const auto rnn_all = search(rnn, src, o);
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_EQ(cached[i].size(), 3u);
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(cached[i][j].tokens, uncached[i][j].tokens) << "line " << i + 1;
    SentenceInputs one;
    one.keys = {i};
    const auto alone = search(rnn, {src[i]}, o, one).front();
    ASSERT_EQ(alone.size(), 3u);
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(alone[j].tokens, rnn_all[i][j].tokens) << "rnn line " << i + 1;
  }
}

}  // namespace
}  // namespace attn
