// Greedy and beam search on the fixture models against torch_ref.py's outputs token for token
// (greedy.txt: max-len 20; beam4.txt: beam 4, alpha 0.6; beam3_a0.txt: beam 3, alpha 0), and
// the search's own invariants: the KV cache changes nothing, batching changes nothing, the
// n-best list is sorted.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "attn/decode/row_decoder.h"
#include "attn/decode/search.h"
#include "attn/error.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_model;

SearchOptions options(int beam, double alpha, bool cache = true) {
  SearchOptions o;
  o.beam = beam;
  o.length_penalty = alpha;
  o.max_len = 20;
  o.use_cache = cache;
  return o;
}

// Searches `sources` in consecutive batches of `batch` sentences.
std::vector<std::vector<Hypothesis>> search_in_batches(const Transformer& m,
                                                       const std::vector<std::vector<int32_t>>& sources,
                                                       const SearchOptions& o, size_t batch) {
  std::vector<std::vector<Hypothesis>> out;
  for (size_t i = 0; i < sources.size(); i += batch) {
    std::vector<std::vector<int32_t>> part(sources.begin() + i, sources.begin() + std::min(sources.size(), i + batch));
    for (auto& h : search(m, part, o)) out.push_back(std::move(h));
  }
  return out;
}

// Counts the sentences whose best hypothesis differs from the expected ids (and reports them).
int count_mismatches(const std::string& what, const std::vector<std::vector<Hypothesis>>& got,
                     const std::vector<std::vector<int32_t>>& expected) {
  EXPECT_EQ(got.size(), expected.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    EXPECT_FALSE(got[i].empty()) << what << " sentence " << i;
    if (got[i].empty() || got[i][0].tokens != expected[i]) {
      ++bad;
      ADD_FAILURE() << what << ": sentence " << i + 1 << " differs from torch_ref.py";
    }
  }
  return bad;
}

class SearchTest : public ::testing::TestWithParam<std::string> {};

// One sentence at a time with the cache, and all 24 in one batch without it.
TEST_P(SearchTest, GreedyEqualsTorchRef) {
  const Transformer& m = fixture_model(GetParam());
  auto src = fixture_ids(GetParam(), "src.txt");
  auto expected = fixture_ids(GetParam(), "greedy.txt");
  int bad = count_mismatches("greedy, batch 1", search_in_batches(m, src, options(1, 0.6), 1), expected);
  bad += count_mismatches("greedy, no cache, batch 24", search(m, src, options(1, 0.6, false)), expected);
  std::printf("%-20s greedy: %d of %zu sentences differ from torch_ref.py\n", GetParam().c_str(), bad, src.size());
}

TEST_P(SearchTest, BeamEqualsTorchRef) {
  const Transformer& m = fixture_model(GetParam());
  auto src = fixture_ids(GetParam(), "src.txt");
  auto greedy = fixture_ids(GetParam(), "greedy.txt");
  int bad4 = count_mismatches("beam 4 alpha 0.6", search(m, src, options(4, 0.6)),
                              fixture_ids(GetParam(), "beam4.txt"));
  int bad3 = count_mismatches("beam 3 alpha 0", search(m, src, options(3, 0.0)),
                              fixture_ids(GetParam(), "beam3_a0.txt"));
  auto beam4 = fixture_ids(GetParam(), "beam4.txt");
  int differ_from_greedy = 0;
  for (size_t i = 0; i < src.size(); ++i) differ_from_greedy += beam4[i] != greedy[i];
  std::printf("%-20s beam 4 (alpha 0.6): %d differ, beam 3 (alpha 0): %d differ, of %zu "
              "(torch's beam 4 differs from greedy on %d)\n",
              GetParam().c_str(), bad4, bad3, src.size(), differ_from_greedy);
}

// The KV cache and the batching are optimisations: the hypotheses and their log-probs must be
// those of the plain path (the full decoder re-run on every prefix), 4-best lists included.
TEST_P(SearchTest, CacheAndBatchingChangeNothing) {
  const Transformer& m = fixture_model(GetParam());
  auto src = fixture_ids(GetParam(), "src.txt");
  SearchOptions o = options(4, 0.6);
  o.n_best = 4;
  SearchOptions plain = o;
  plain.use_cache = false;
  auto reference = search_in_batches(m, src, plain, 8);
  auto cached1 = search_in_batches(m, src, o, 1);
  auto cached8 = search_in_batches(m, src, o, 8);
  double worst = 0.0;
  for (const auto* run : {&cached1, &cached8}) {
    ASSERT_EQ(run->size(), reference.size());
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_EQ((*run)[i].size(), reference[i].size()) << "sentence " << i + 1;
      for (size_t j = 0; j < reference[i].size(); ++j) {
        EXPECT_EQ((*run)[i][j].tokens, reference[i][j].tokens) << "sentence " << i + 1 << " hypothesis " << j;
        worst = std::max(worst, std::fabs((*run)[i][j].logprob - reference[i][j].logprob));
      }
    }
  }
  std::printf("%-20s beam 4, 4-best: cached batch 1 and 8 = uncached batch 8 token for token, "
              "log-prob max |diff| %.2e (tolerance 1e-4)\n", GetParam().c_str(), worst);
  EXPECT_LE(worst, 1e-4);
}

// The search takes each row's k best from the logits (RowDecoder::step_logits) rather than from
// written log-probs: the same tokens and the same log-probs to the bit, greedy and beam, n-best.
TEST_P(SearchTest, TopKFromTheLogitsEqualsTopKOfTheLogProbs) {
  const Transformer& m = fixture_model(GetParam());
  auto src = fixture_ids(GetParam(), "src.txt");
  std::vector<int64_t> lengths;
  for (const auto& s : src) lengths.push_back(static_cast<int64_t>(s.size()));
  for (int beam : {1, 4}) {
    SearchOptions o = options(beam, 0.6);
    o.n_best = beam;
    RowDecoder fused = start_row_decoder(m, src, true);
    RowDecoder written = start_row_decoder(m, src, true);
    ASSERT_TRUE(fused.step_logits);
    written.step_logits = nullptr;
    auto a = search(fused, lengths, o), b = search(written, lengths, o);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].size(), b[i].size()) << "beam " << beam << " sentence " << i + 1;
      for (size_t j = 0; j < a[i].size(); ++j) {
        EXPECT_EQ(a[i][j].tokens, b[i][j].tokens) << "beam " << beam << " sentence " << i + 1;
        EXPECT_EQ(a[i][j].logprob, b[i][j].logprob) << "beam " << beam << " sentence " << i + 1;
      }
    }
  }
}

TEST_P(SearchTest, NBestIsSortedAndScoredByTheLengthPenalty) {
  const Transformer& m = fixture_model(GetParam());
  auto src = fixture_ids(GetParam(), "src.txt");
  SearchOptions o = options(4, 0.6);
  o.n_best = 4;
  auto best = search(m, src, options(4, 0.6));
  auto nbest = search(m, src, o);
  size_t total = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_FALSE(nbest[i].empty());
    ASSERT_LE(nbest[i].size(), 4u);
    total += nbest[i].size();
    EXPECT_EQ(nbest[i][0].tokens, best[i][0].tokens) << "sentence " << i + 1;
    for (size_t j = 0; j < nbest[i].size(); ++j) {
      const Hypothesis& h = nbest[i][j];
      if (j > 0) {
        EXPECT_GE(nbest[i][j - 1].score, h.score) << "sentence " << i + 1 << " hypothesis " << j;
      }
      EXPECT_LE(h.logprob, 0.0);
      EXPECT_LE(h.tokens.size(), 20u);
      // Finished hypotheses are scored with the eos counted (max_len 20 allows at most 19 tokens).
      if (h.tokens.size() < 20) {
        EXPECT_NEAR(h.score, h.logprob / length_penalty(static_cast<int64_t>(h.tokens.size()) + 1, 0.6), 1e-12);
      }
    }
  }
  std::printf("%-20s 4-best: %zu hypotheses for %zu sentences, each list sorted\n", GetParam().c_str(),
              total, src.size());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SearchTest, ::testing::ValuesIn(testing::transformer_configs()));

// The stop rule's bound with alpha > 0 is logprob / lp(max_len), not lp(len + 1): the looser
// bound would stop this search before its best hypothesis is found. Expected output from
//   torch_ref.py beam --model tests/fixtures/transformer/pre_unshared_l1_h1 --beam 6 --alpha 2
//                     --max-len 30   (sentence 12 of src.txt)
// (the 2nd best scores -2.79967 against -2.79896: no near-tie).
TEST(Search, BoundWithPositiveAlphaUsesMaxLen) {
  const Transformer& m = fixture_model("pre_unshared_l1_h1");
  SearchOptions o;
  o.beam = 6;
  o.length_penalty = 2.0;
  o.max_len = 30;
  auto h = search(m, {{9, 15, 10, 15, 22, 20, 9, 15, 10, 15, 22, 20, 2}}, o);
  std::vector<int32_t> expected = {3, 19, 3, 19, 3, 19, 3, 7, 11, 19, 3, 7, 11, 19, 3,
                                   7, 11, 19, 3, 7, 11, 11, 19, 3, 7, 11, 11, 11, 11};
  EXPECT_EQ(h[0][0].tokens, expected);
}

TEST(Search, LengthPenaltyIsGnmt) {
  EXPECT_DOUBLE_EQ(length_penalty(1, 0.6), 1.0);
  EXPECT_DOUBLE_EQ(length_penalty(7, 0.6), std::pow(2.0, 0.6));
  EXPECT_DOUBLE_EQ(length_penalty(13, 0.0), 1.0);
}

TEST(Search, MaxLenCapsTheOutputAndDefaultsToSourcePlus50) {
  const Transformer& m = fixture_model("post_shared_l2_h4");
  auto src = fixture_ids("post_shared_l2_h4", "src.txt");
  SearchOptions o;
  o.beam = 1;
  o.max_len = 3;
  // Greedy is a prefix property: with max_len 3 the output is greedy.txt's first 3 ids (or all
  // of it when eos came earlier).
  auto greedy = fixture_ids("post_shared_l2_h4", "greedy.txt");
  auto capped = search(m, src, o);
  for (size_t i = 0; i < src.size(); ++i) {
    std::vector<int32_t> expected(greedy[i].begin(), greedy[i].begin() + std::min<size_t>(3, greedy[i].size()));
    EXPECT_EQ(capped[i][0].tokens, expected) << "sentence " << i + 1;
  }
  // Sentence 3 (11 ids) repeats 22 without ever choosing eos: torch_ref.py greedy --max-len 61
  // gives 61 times 22, and so must the default max_len (source length + 50).
  o.max_len = 0;
  auto h = search(m, {src[2]}, o);
  ASSERT_EQ(src[2].size(), 11u);
  EXPECT_EQ(h[0][0].tokens, std::vector<int32_t>(61, 22));
}

TEST(Search, RejectsBadOptions) {
  const Transformer& m = fixture_model("post_shared_l2_h4");
  SearchOptions o;
  o.n_best = 5;  // more than the beam
  EXPECT_THROW(search(m, {{5, 6, 2}}, o), Error);
  o = SearchOptions();
  o.max_len = static_cast<int>(m.config.max_len) + 1;
  EXPECT_THROW(search(m, {{5, 6, 2}}, o), Error);
  EXPECT_THROW(search(m, {{}}, SearchOptions()), Error);
  o = SearchOptions();
  o.beam = static_cast<int>(m.config.tgt_vocab) + 1;  // more hypotheses than tokens to extend them with
  try {
    search(m, {{5, 6, 2}}, o);
    ADD_FAILURE() << "a beam wider than the vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn
