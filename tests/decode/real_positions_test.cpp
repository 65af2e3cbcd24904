// Decoding's encoder over the real positions only (include/attn/ops/padding.h,
// encode_real_positions): the rows moved out and back exactly, the memory equal to encode()'s at
// every real position and 0 at the padding, and the decoder's log-probs over it equal to the
// full decode over encode()'s memory.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "attn/decode/step_decoder.h"
#include "attn/ops/padding.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_model;

// Sentences of 5, 2 and 4 ids (pad 0 after them) over a small vocabulary.
Tensor padded_sources(int32_t pad, int64_t vocab) {
  const int64_t lengths[] = {5, 2, 4};
  std::vector<int32_t> ids;
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t t = 0; t < 5; ++t)
      ids.push_back(t < lengths[b] ? static_cast<int32_t>(3 + (7 * b + 3 * t) % (vocab - 3)) : pad);
  return Tensor::from_ids(ids, {3, 5});
}

TEST(RealRows, RemoveAndRestoreMoveRowsExactly) {
  const Tensor pad = Tensor::from_ids({0, 0, 1, 0, 1, 1}, {2, 3});  // lengths 2 and 1
  const RealRows r = real_rows(pad);
  ASSERT_EQ(r.rows, (std::vector<int64_t>{0, 1, 3}));
  Tensor x = Tensor::empty({2, 3, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 0.5f * static_cast<float>(i) - 3.0f;
  const Tensor packed = remove_padding(x, r);
  ASSERT_EQ(packed.shape(), (Shape{1, 3, 4}));
  const Tensor back = restore_padding(packed, r);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t c = 0; c < 4; ++c) {
        const float expected = pad.at({b, t}) != 0.0f ? 0.0f : x.at({b, t, c});
        EXPECT_EQ(back.at({b, t, c}), expected) << "b " << b << " t " << t << " c " << c;
      }
  EXPECT_THROW(remove_padding(Tensor::empty({2, 4, 4}), r), Error);
  EXPECT_THROW(restore_padding(Tensor::empty({1, 2, 4}), r), Error);
}

class RealPositionsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RealPositionsTest, MemoryAndLogProbsEqualThePaddedEncoders) {
  const Transformer& m = fixture_model(GetParam());
  NoGrad no_grad;
  Context ctx;
  const Tensor src = padded_sources(m.config.pad_id, m.config.src_vocab);
  const Tensor src_pad = padding_mask(src, m.config.pad_id);
  const Tensor padded = encode(m, src, ctx).value();
  const Tensor real = encode_real_positions(m, src);
  ASSERT_EQ(real.shape(), padded.shape());
  double worst = 0.0;
  for (int64_t b = 0; b < src.size(0); ++b)
    for (int64_t t = 0; t < src.size(1); ++t)
      for (int64_t c = 0; c < padded.size(2); ++c) {
        if (src_pad.at({b, t}) != 0.0f) {
          ASSERT_EQ(real.at({b, t, c}), 0.0f) << "padding at b " << b << " t " << t;
          continue;
        }
        worst = std::max<double>(worst, std::fabs(real.at({b, t, c}) - padded.at({b, t, c})));
      }
  // The incremental decoder over the new memory (keys and values of the real positions only)
  // against the full decode over encode()'s, three steps of a made-up prefix.
  const std::vector<int32_t> prefix = {m.config.bos_id, 5, 6};
  std::vector<int32_t> tgt;
  for (int64_t b = 0; b < 3; ++b) tgt.insert(tgt.end(), prefix.begin(), prefix.end());
  const int64_t T = 3, V = m.config.tgt_vocab;
  const Tensor full = log_softmax(Var(decode(m, Tensor::from_ids(tgt, {3, T}), Var(padded), src_pad, ctx).value().reshape({3 * T, V}))).value();
  DecoderState state = start_decoding(m, real, src_pad);
  double worst_logp = 0.0;
  for (int64_t t = 0; t < T; ++t) {
    const Tensor step = decode_step(m, state, {prefix[t], prefix[t], prefix[t]});  // [3, V]
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t v = 0; v < V; ++v)
        worst_logp = std::max<double>(worst_logp, std::fabs(step.at({b, v}) - full.at({b * T + t, v})));
  }
  std::printf("%-20s real positions: memory max |diff| %.2e (tol 1e-5), log-probs %.2e (tol 1e-4)\n",
              GetParam().c_str(), worst, worst_logp);
  EXPECT_LE(worst, 1e-5);
  EXPECT_LE(worst_logp, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RealPositionsTest, ::testing::ValuesIn(testing::transformer_configs()));

}  // namespace
}  // namespace attn
