// The whole n-best list against PyTorch: torch_ref.py's beam search (beam 4, alpha 0.6, max-len
// 20) with its finished list kept (nbest4.json, made by make_nbest_fixtures.py) gives, for every
// source line of every fixture model, the 4 hypotheses, their normalised scores and total
// log-probabilities; attn's 4-best list must hold the same hypotheses in the same order.
#include <cmath>
#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attn/decode/search.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_dir;
using testing::fixture_ids;
using testing::fixture_model;

class NBestTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NBestTest, FourBestEqualsTorchRef) {
  std::ifstream in(fixture_dir(GetParam()) + "/nbest4.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json want = nlohmann::json::parse(in);
  auto src = fixture_ids(GetParam(), "src.txt");
  ASSERT_EQ(want.size(), src.size());
  SearchOptions o;
  o.beam = 4;
  o.n_best = 4;
  o.length_penalty = 0.6;
  o.max_len = 20;
  auto got = search(fixture_model(GetParam()), src, o);
  ASSERT_EQ(got.size(), src.size());
  int beyond_first = 0;
  double worst = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << "sentence " << i + 1;
    for (size_t j = 0; j < got[i].size(); ++j) {
      const Hypothesis& h = got[i][j];
      EXPECT_EQ(h.tokens, want[i][j][0].get<std::vector<int32_t>>()) << "sentence " << i + 1 << " hypothesis " << j;
      worst = std::max({worst, std::fabs(h.score - want[i][j][1].get<double>()),
                        std::fabs(h.logprob - want[i][j][2].get<double>())});
      beyond_first += j > 0;
    }
  }
  std::printf("%-20s 4-best: %d hypotheses beyond the first equal torch_ref's, score/log-prob max |diff| %.2e\n",
              GetParam().c_str(), beyond_first, worst);
  EXPECT_LE(worst, 1e-4);
  EXPECT_GE(beyond_first, 3 * static_cast<int>(src.size()) - 3);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NBestTest, ::testing::ValuesIn(testing::transformer_configs()));

}  // namespace
}  // namespace attn
