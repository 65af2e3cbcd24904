// Ensembles (decode/ensemble.h): one search over sum_m w_m log p_m.
//   - greedy (weights 0.5, 0.5) and beam 4 (0.6, 0.4) over the fixture models post_shared_l2_h4 and
//     pre_shared_l3_h2 equal a plain PyTorch ensemble (tests/decode/make_decode_fixtures.py:
//     ensemble_greedy.txt, ensemble_beam4.txt) token for token, with and without the KV cache;
//   - the ensemble score equals PyTorch's (ensemble_score.txt);
//   - a Transformer + RNN ensemble's greedy output equals a greedy written here over each model's
//     full teacher-forced log-probs (no step decoder, no cache);
//   - one model of weight 1 is that model, bit for bit; target vocabularies must agree.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "attn/decode/ensemble.h"
#include "attn/decode/score.h"
#include "attn/error.h"
#include "attn/models/rnn_seq2seq.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_lines;
using testing::fixture_model;

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

struct Pair {
  Seq2Seq a = as_seq2seq(fixture_model("post_shared_l2_h4"));
  Seq2Seq b = as_seq2seq(fixture_model("pre_shared_l3_h2"));
};

SearchOptions options(int beam, bool cache) {
  SearchOptions o;
  o.beam = beam;
  o.length_penalty = 0.6;
  o.max_len = 20;
  o.use_cache = cache;
  return o;
}

int mismatches(const std::vector<std::vector<Hypothesis>>& got, const std::vector<std::vector<int32_t>>& expected) {
  EXPECT_EQ(got.size(), expected.size());
  int bad = 0;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i)
    if (got[i].front().tokens != expected[i]) {
      ++bad;
      ADD_FAILURE() << "sentence " << i + 1 << " differs from the PyTorch ensemble";
    }
  return bad;
}

TEST(Ensemble, GreedyAndBeamEqualPyTorch) {
  Pair p;
  const auto src = fixture_ids("post_shared_l2_h4", "src.txt");
  const auto average = make_ensemble({&p.a, &p.b}, {});
  EXPECT_DOUBLE_EQ(average[0].weight, 0.5);
  const auto weighted = make_ensemble({&p.a, &p.b}, {0.6, 0.4});
  for (bool cache : {true, false}) {
    EXPECT_EQ(mismatches(search(average, src, options(1, cache)), decode_fixture("ensemble_greedy.txt")), 0);
    EXPECT_EQ(mismatches(search(weighted, src, options(4, cache)), decode_fixture("ensemble_beam4.txt")), 0);
  }
  // The ensemble is not either model alone.
  int differ = 0;
  const auto a_alone = fixture_ids("post_shared_l2_h4", "greedy.txt");
  const auto ens = decode_fixture("ensemble_greedy.txt");
  for (size_t i = 0; i < src.size(); ++i) differ += a_alone[i] != ens[i];
  EXPECT_GT(differ, 5);
}

TEST(Ensemble, ScoreEqualsPyTorch) {
  Pair p;
  const auto src = fixture_ids("post_shared_l2_h4", "src.txt");
  const auto tgt = fixture_ids("post_shared_l2_h4", "tgt.txt");
  const auto expected = fixture_lines("post_shared_l2_h4", "../../decode/ensemble_score.txt");
  const auto got = score_translations(make_ensemble({&p.a, &p.b}, {0.6, 0.4}), src, tgt);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], std::stod(expected[i]), 1e-3) << "pair " << i + 1;
}

TEST(Ensemble, OneModelOfWeightOneIsThatModel) {
  Pair p;
  const auto src = fixture_ids("post_shared_l2_h4", "src.txt");
  const auto alone = search(p.a, src, options(4, true));
  const auto one = search(make_ensemble({&p.a}, {1.0}), src, options(4, true));
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(one[i].front().tokens, alone[i].front().tokens);
    EXPECT_EQ(one[i].front().score, alone[i].front().score);
  }
}

// A random RNN encoder-decoder over the fixture's vocabularies.
Seq2Seq rnn_model() {
  RnnConfig c;
  c.src_vocab = c.tgt_vocab = 48;
  c.d_model = 16;
  c.dropout = 0;
  return as_seq2seq(make_rnn_seq2seq(c, 5));
}

// Greedy over sum_m w_m log p_m, each log p_m from the model's full teacher-forced pass over the
// whole prefix (seq2seq_logits): no step decoder, no state carried between steps.
std::vector<int32_t> plain_greedy(const std::vector<EnsembleMember>& members, const std::vector<int32_t>& src) {
  std::vector<int32_t> in = {1};
  for (int step = 0; step < 20; ++step) {
    std::vector<float> total(48, 0.0f);
    for (const EnsembleMember& m : members) {
      NoGrad no_grad;
      Var logits = seq2seq_logits(*m.model, Tensor::from_ids(src, {1, static_cast<int64_t>(src.size())}),
                                  Tensor::from_ids(in, {1, static_cast<int64_t>(in.size())}), Context{});
      Tensor lp = log_softmax(logits).value().contiguous();
      const float* last = lp.data<float>() + (static_cast<int64_t>(in.size()) - 1) * 48;
      for (size_t v = 0; v < 48; ++v) total[v] += static_cast<float>(m.weight) * last[v];
    }
    const int32_t best = static_cast<int32_t>(std::max_element(total.begin(), total.end()) - total.begin());
    if (best == 2) break;
    in.push_back(best);
  }
  return {in.begin() + 1, in.end()};
}

TEST(Ensemble, TransformerAndRnnGreedyEqualsAPlainEnsemble) {
  Pair p;
  const Seq2Seq rnn = rnn_model();
  const auto members = make_ensemble({&p.a, &rnn}, {0.7, 0.3});
  const auto src = fixture_ids("post_shared_l2_h4", "src.txt");
  const auto got = search(members, src, options(1, true));
  for (size_t i = 0; i < src.size(); ++i) EXPECT_EQ(got[i].front().tokens, plain_greedy(members, src[i])) << "line " << i + 1;
  // The RNN moves the choice: the mix is not the Transformer alone.
  int differ = 0;
  const auto a_alone = fixture_ids("post_shared_l2_h4", "greedy.txt");
  for (size_t i = 0; i < src.size(); ++i) differ += got[i].front().tokens != a_alone[i];
  std::printf("Transformer 0.7 + RNN 0.3: greedy differs from the Transformer alone on %d of %zu\n", differ, src.size());
  EXPECT_GT(differ, 0);
}

TEST(Ensemble, TargetVocabulariesMustAgree) {
  Seq2Seq a = as_seq2seq(fixture_model("post_shared_l2_h4"));       // 48 target pieces
  Seq2Seq c = as_seq2seq(fixture_model("post_unshared_l3_h8"));     // 46
  EXPECT_THROW(make_ensemble({&a, &c}, {}), Error);
  EXPECT_THROW(make_ensemble({&a, &a}, {1.0}), Error);
  EXPECT_THROW(make_ensemble({&a, &a}, {0.0, 0.0}), Error);
  EXPECT_THROW(make_ensemble({&a, &a}, {1.0, -0.5}), Error);
}

// A member of weight 0 adds nothing: the ensemble is the other model, even with a shortlist (whose
// -inf outside the list would make 0 x -inf = NaN if it were added).
TEST(Ensemble, WeightZeroMemberAddsNothing) {
  Pair p;
  const auto src = fixture_ids("post_shared_l2_h4", "src.txt");
  SentenceInputs in;
  std::vector<int32_t> first40(40);
  for (int32_t t = 0; t < 40; ++t) first40[static_cast<size_t>(t)] = t;
  in.allowed.assign(src.size(), first40);
  const auto alone = search(p.a, src, options(4, true), in);
  const auto with_zero = search(make_ensemble({&p.b, &p.a}, {0.0, 1.0}), src, options(4, true), in);
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(with_zero[i].front().tokens, alone[i].front().tokens) << "line " << i + 1;
    EXPECT_EQ(with_zero[i].front().score, alone[i].front().score) << "line " << i + 1;
  }
}

}  // namespace
}  // namespace attn
