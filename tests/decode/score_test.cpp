// score on the fixture models against torch_ref.py's score.txt (one total log-prob per pair),
// on one padded batch of all pairs and one pair at a time: target padding must not count.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "attn/decode/score.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_model;
using testing::fixture_rows;

constexpr double kTolerance = 1e-3;

class ScoreTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScoreTest, EqualsTorchRefBatchedOrNot) {
  const Transformer& m = fixture_model(GetParam());
  auto src = fixture_ids(GetParam(), "src.txt");
  auto tgt = fixture_ids(GetParam(), "tgt.txt");
  auto expected = fixture_rows<double>(GetParam(), "score.txt");
  ASSERT_EQ(expected.size(), src.size());
  std::vector<double> batched = score_translations(m, src, tgt);  // one batch of all, padded
  ASSERT_EQ(batched.size(), src.size());
  double d_batched = 0.0, d_single = 0.0, d_between = 0.0;
  for (size_t i = 0; i < src.size(); ++i) {
    double single = score_translations(m, {src[i]}, {tgt[i]})[0];
    d_batched = std::max(d_batched, std::fabs(batched[i] - expected[i][0]));
    d_single = std::max(d_single, std::fabs(single - expected[i][0]));
    d_between = std::max(d_between, std::fabs(single - batched[i]));
    EXPECT_NEAR(batched[i], expected[i][0], kTolerance) << "pair " << i + 1;
  }
  std::printf("%-20s score of %zu pairs: batched max |diff| %.2e, one by one %.2e (tolerance %.0e); "
              "batched vs one by one %.2e\n",
              GetParam().c_str(), src.size(), d_batched, d_single, kTolerance, d_between);
  EXPECT_LE(d_single, kTolerance);
  EXPECT_LE(d_between, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ScoreTest, ::testing::ValuesIn(testing::transformer_configs()));

TEST(Score, EmptyTargetIsTheEosLogProb) {
  const Transformer& m = fixture_model("post_shared_l2_h4");
  std::vector<int32_t> src = {5, 6, 7, 2};
  double s = score_translations(m, {src}, {{}})[0];
  NoGrad no_grad;
  Context ctx;
  Tensor x = Tensor::from_ids(src, {1, 4});
  Tensor pad = padding_mask(x, m.config.pad_id);
  Tensor memory = encode(m, x, ctx).value();
  DecoderState state = start_decoding(m, memory, pad);
  Tensor logp = decode_step(m, state, {m.config.bos_id});
  EXPECT_NEAR(s, logp.at({0, m.config.eos_id}), 1e-5);
}

}  // namespace
}  // namespace attn
