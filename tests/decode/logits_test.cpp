// Teacher-forced log-probs of the fixture models against torch_ref.py's (logits.txt: one row per
// target prefix position), through the full decode and through the incremental decoder (the KV
// cache, one decode_step per position).
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "attn/decode/step_decoder.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_model;
using testing::fixture_rows;

constexpr double kTolerance = 1e-4;

// Largest |a[t][v] - logp[t, v]| over the rows; also checks the shapes.
double max_diff(const std::vector<std::vector<float>>& expected, const Tensor& logp) {
  EXPECT_EQ(logp.size(0), static_cast<int64_t>(expected.size()));
  double worst = 0.0;
  for (size_t t = 0; t < expected.size(); ++t) {
    EXPECT_EQ(logp.size(1), static_cast<int64_t>(expected[t].size()));
    for (size_t v = 0; v < expected[t].size(); ++v)
      worst = std::max<double>(worst, std::fabs(expected[t][v] - logp.at({static_cast<int64_t>(t), static_cast<int64_t>(v)})));
  }
  return worst;
}

class LogitsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LogitsTest, FullAndIncrementalDecodeMatchTorch) {
  const Transformer& m = fixture_model(GetParam());
  auto input = fixture_ids(GetParam(), "logits_input.txt");  // src; tgt prefix with bos
  auto expected = fixture_rows<float>(GetParam(), "logits.txt");
  ASSERT_EQ(input.size(), 2u);
  const auto& src_ids = input[0];
  const auto& tgt_ids = input[1];
  int64_t S = static_cast<int64_t>(src_ids.size()), T = static_cast<int64_t>(tgt_ids.size());
  int64_t V = m.config.tgt_vocab;

  NoGrad no_grad;
  Context ctx;
  Tensor src = Tensor::from_ids(src_ids, {1, S});
  Tensor src_pad = padding_mask(src, m.config.pad_id);
  Tensor memory = encode(m, src, ctx).value();
  // Full: every position at once under the causal mask.
  Tensor logits = decode(m, Tensor::from_ids(tgt_ids, {1, T}), Var(memory), src_pad, ctx).value();
  Tensor full = log_softmax(Var(logits.reshape({T, V}))).value();  // [T, V]
  // Incremental: one position per step with the KV cache.
  DecoderState state = start_decoding(m, memory, src_pad);
  Tensor incremental = Tensor::empty({T, V});
  for (int64_t t = 0; t < T; ++t)
    incremental.slice(0, t, t + 1).copy_from(decode_step(m, state, {tgt_ids[static_cast<size_t>(t)]}));

  double d_full = max_diff(expected, full), d_inc = max_diff(expected, incremental);
  double d_between = 0.0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t v = 0; v < V; ++v)
      d_between = std::max(d_between, static_cast<double>(std::fabs(full.at({t, v}) - incremental.at({t, v}))));
  std::printf("%-20s log-probs [%lld, %lld]: full decode max |diff| %.2e, incremental %.2e (tolerance %.0e); "
              "full vs incremental %.2e\n",
              GetParam().c_str(), static_cast<long long>(T), static_cast<long long>(V), d_full, d_inc,
              kTolerance, d_between);
  EXPECT_LE(d_full, kTolerance);
  EXPECT_LE(d_inc, kTolerance);
  EXPECT_LE(d_between, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LogitsTest, ::testing::ValuesIn(testing::transformer_configs()));

}  // namespace
}  // namespace attn
