// Target prefixes, lengths and repetition rules (decode/constraints.h) on the fixture models:
//   - greedy fed a prefix equals PyTorch's greedy fed it (tests/fixtures/decode/prefix_greedy.txt,
//     made by make_decode_fixtures.py with torch_ref.py), and every output (greedy, beam, sampling)
//     starts with its prefix;
//   - --no-repeat-ngram N: no N-gram twice in any output (the fixture models repeat a lot);
//   - the repetition penalty on a constructed row equals the rule computed here; min and max lengths.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "attn/decode/constraints.h"
#include "attn/decode/search.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_model;

const char* kModel = "post_shared_l2_h4";

std::vector<std::vector<int32_t>> decode_fixture(const std::string& file) {
  std::ifstream in(std::string(ATTN_TEST_DATA) + "/decode/" + file);
  EXPECT_TRUE(in.good()) << file;
  std::vector<std::vector<int32_t>> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    rows.emplace_back();
    for (int32_t x; s >> x;) rows.back().push_back(x);
  }
  return rows;
}

SearchOptions greedy(int max_len = 20) {
  SearchOptions o;
  o.beam = 1;
  o.max_len = max_len;
  return o;
}

bool starts_with(const std::vector<int32_t>& v, const std::vector<int32_t>& prefix) {
  return v.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), v.begin());
}

TEST(Prefix, GreedyContinuesAsPyTorch) {
  const Transformer& m = fixture_model(kModel);
  SentenceInputs in;
  in.prefixes = decode_fixture("prefixes.txt");
  const auto expected = decode_fixture("prefix_greedy.txt");
  const auto src = fixture_ids(kModel, "src.txt");
  ASSERT_EQ(in.prefixes.size(), src.size());
  const auto got = search(m, src, greedy(), in);
  int with_prefix = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(got[i].front().tokens, expected[i]) << "line " << i + 1;
    EXPECT_TRUE(starts_with(got[i].front().tokens, in.prefixes[i])) << "line " << i + 1;
    with_prefix += !in.prefixes[i].empty();
  }
  EXPECT_EQ(with_prefix, 18);
  // Without the prefixes the outputs are torch_ref.py's plain greedy, which differs on some lines.
  const auto plain = fixture_ids(kModel, "greedy.txt");
  int differ = 0;
  for (size_t i = 0; i < src.size(); ++i) differ += plain[i] != expected[i];
  EXPECT_GT(differ, 5);
}

TEST(Prefix, BeamAndSamplingStartWithIt) {
  const Transformer& m = fixture_model(kModel);
  SentenceInputs in;
  in.prefixes = decode_fixture("prefixes.txt");
  const auto src = fixture_ids(kModel, "src.txt");
  SearchOptions beam = greedy();
  beam.beam = 4;
  beam.n_best = 4;
  SearchOptions sample = greedy();
  sample.n_best = 3;
  sample.sampling.on = true;
  sample.sampling.temperature = 1.5;
  for (const SearchOptions& o : {beam, sample}) {
    const auto got = search(m, src, o, in);
    for (size_t i = 0; i < src.size(); ++i)
      for (const Hypothesis& h : got[i]) EXPECT_TRUE(starts_with(h.tokens, in.prefixes[i])) << "line " << i + 1;
  }
}

// Whether some n-gram occurs twice in v.
bool repeats_ngram(const std::vector<int32_t>& v, int n) {
  std::set<std::vector<int32_t>> seen;
  for (size_t i = 0; i + static_cast<size_t>(n) <= v.size(); ++i)
    if (!seen.insert(std::vector<int32_t>(v.begin() + static_cast<std::ptrdiff_t>(i),
                                          v.begin() + static_cast<std::ptrdiff_t>(i) + n))
             .second)
      return true;
  return false;
}

TEST(NoRepeatNgram, NoOutputRepeatsAnNgram) {
  const auto src = fixture_ids(kModel, "src.txt");
  const Transformer& m = fixture_model(kModel);
  int repeating_without = 0;
  for (const auto& hyps : search(m, src, greedy())) repeating_without += repeats_ngram(hyps.front().tokens, 2);
  EXPECT_GT(repeating_without, 10);  // the rule has work to do
  for (int n : {1, 2, 3}) {
    for (int beam : {1, 4}) {
      SearchOptions o = greedy();
      o.beam = beam;
      o.n_best = beam;
      o.no_repeat_ngram = n;
      const auto got = search(m, src, o);
      for (size_t i = 0; i < src.size(); ++i)
        for (const Hypothesis& h : got[i])
          EXPECT_FALSE(repeats_ngram(h.tokens, n)) << "n " << n << " beam " << beam << " line " << i + 1;
    }
  }
}

TEST(RepetitionPenalty, MultipliesTheLogProbsOfTokensOutputThenRenormalises) {
  const std::vector<double> logits = {2.0, 1.0, 0.5, -1.0, 0.0};
  double z = 0;
  for (double l : logits) z += std::exp(l);
  std::vector<float> row;
  for (double l : logits) row.push_back(static_cast<float>(l - std::log(z)));
  const std::vector<float> original = row;
  Constraints c;
  c.repetition_penalty = 2.0;
  constrain_row(row.data(), 5, {0, 3, 0}, -1, c);
  // By hand: log-probs of tokens 0 and 3 doubled, the others kept, then log-softmax.
  std::vector<double> q(original.begin(), original.end());
  q[0] *= 2;
  q[3] *= 2;
  double zq = 0;
  for (double x : q) zq += std::exp(x);
  for (size_t v = 0; v < 5; ++v) EXPECT_NEAR(row[v], q[v] - std::log(zq), 1e-6) << "token " << v;
  EXPECT_LT(row[0], original[0]);  // a repeated token is less likely,
  EXPECT_GT(row[1], original[1]);  // the others more
  // R = 1 changes nothing; a forced token bans every other.
  std::vector<float> same = original;
  constrain_row(same.data(), 5, {0, 3}, -1, Constraints{});
  EXPECT_EQ(same, original);
  constrain_row(same.data(), 5, {}, 4, c);
  EXPECT_EQ(same[4], original[4]);
  for (size_t v = 0; v < 4; ++v) EXPECT_TRUE(std::isinf(same[v]));
}

TEST(RepetitionPenalty, FewerRepeatsInGreedyOutputs) {
  const auto src = fixture_ids(kModel, "src.txt");
  const Transformer& m = fixture_model(kModel);
  auto repeated_tokens = [&](double r) {
    SearchOptions o = greedy();
    o.repetition_penalty = r;
    int n = 0;
    for (const auto& hyps : search(m, src, o)) {
      const auto& t = hyps.front().tokens;
      n += static_cast<int>(t.size() - std::set<int32_t>(t.begin(), t.end()).size());
    }
    return n;
  };
  EXPECT_LT(repeated_tokens(3.0), repeated_tokens(1.0) / 2);
}

TEST(Lengths, MinLenAndMaxLenAB) {
  const auto src = fixture_ids(kModel, "src.txt");
  const Transformer& m = fixture_model(kModel);
  SearchOptions o = greedy(0);
  o.min_len = 6;
  o.max_len_a = 0.5;
  o.max_len_b = 3;
  for (int beam : {1, 3}) {
    o.beam = beam;
    const auto got = search(m, src, o);
    for (size_t i = 0; i < src.size(); ++i) {
      const int64_t most = static_cast<int64_t>(std::floor(0.5 * static_cast<double>(src[i].size()))) + 3;
      const int64_t len = static_cast<int64_t>(got[i].front().tokens.size());
      EXPECT_LE(len, most) << "line " << i + 1;
      EXPECT_GE(len, std::min<int64_t>(6, most)) << "line " << i + 1;
    }
  }
}

// An output the search had to stop at the maximum length is marked unfinished; one that ended
// with eos is finished, and so shorter than the limit (which counts the eos). min_len = max_len
// leaves eos no room, so every output of every search kind is cut off there.
TEST(Lengths, OutputsCutOffAtTheLimitAreUnfinished) {
  const auto src = fixture_ids(kModel, "src.txt");
  const Transformer& m = fixture_model(kModel);
  for (bool sampling : {false, true})
    for (int beam : {1, 3}) {
      SearchOptions o = greedy(5);
      o.beam = sampling ? 1 : beam;
      o.sampling.on = sampling;
      o.n_best = sampling ? 2 : 1;
      o.min_len = 5;
      for (const auto& hyps : search(m, src, o))
        for (const Hypothesis& h : hyps) {
          EXPECT_FALSE(h.finished) << "beam " << beam << " sampling " << sampling;
          EXPECT_EQ(h.tokens.size(), 5u);
        }
      o.min_len = 0;
      o.max_len = 30;
      int finished = 0;
      for (const auto& hyps : search(m, src, o))
        for (const Hypothesis& h : hyps) {
          finished += h.finished ? 1 : 0;
          EXPECT_EQ(h.finished, h.tokens.size() < 30u) << "beam " << beam << " sampling " << sampling;
        }
      EXPECT_GT(finished, 0) << "beam " << beam << " sampling " << sampling;
    }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Suppressed tokens (SearchOptions::suppress, transformers' bad_words_ids) never appear: the two
// tokens greedy outputs most often, suppressed, are in no greedy or beam output.
TEST(Suppress, SuppressedTokensNeverAppear) {
  const Transformer& m = fixture_model(kModel);
  const auto src = fixture_ids(kModel, "src.txt");
  SearchOptions o = greedy(20);
  const auto plain = search(m, src, o);
  std::map<int32_t, int> count;
  for (const auto& h : plain)
    for (int32_t t : h.front().tokens) ++count[t];
  ASSERT_FALSE(count.empty());
  // the two tokens output most often
  std::vector<std::pair<int, int32_t>> by_count;
  for (const auto& [t, n] : count) by_count.push_back({n, t});
  std::sort(by_count.rbegin(), by_count.rend());
  o.suppress = {by_count[0].second, by_count.size() > 1 ? by_count[1].second : by_count[0].second};
  for (int beam : {1, 4}) {
    o.beam = beam;
    for (const auto& h : search(m, src, o))
      for (int32_t t : h.front().tokens)
        EXPECT_TRUE(t != o.suppress[0] && t != o.suppress[1]) << "beam " << beam << ": suppressed token " << t;
  }
}

// eos_at_max_len (transformers' forced_eos_token_id): every output ends at the maximum length at
// the latest with eos, which adds log-prob 0: greedy's tokens and log-prob equal those of the
// search one step shorter without it.
TEST(EosAtMaxLen, TheLastTokenIsEosAtLogProbZero) {
  const Transformer& m = fixture_model(kModel);
  const auto src = fixture_ids(kModel, "src.txt");
  SearchOptions forced = greedy(6);
  forced.eos_at_max_len = true;
  SearchOptions shorter = forced;
  shorter.max_len = 5;
  shorter.eos_at_max_len = false;
  const auto a = search(m, src, forced), b = search(m, src, shorter);
  int cut = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_TRUE(a[i].front().finished) << "line " << i + 1;
    EXPECT_LE(a[i].front().tokens.size(), 5u);
    if (b[i].front().finished) continue;  // ended by itself before the limit
    ++cut;
    EXPECT_EQ(a[i].front().tokens, b[i].front().tokens) << "line " << i + 1;
    EXPECT_NEAR(a[i].front().logprob, b[i].front().logprob, 1e-9) << "line " << i + 1;
  }
  EXPECT_GT(cut, 0) << "no output reached the limit: the check is void";
}

}  // namespace
}  // namespace attn
