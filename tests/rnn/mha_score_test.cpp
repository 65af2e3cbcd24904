// Multi-head attention with a score other than scaled_dot (the unfused path of
// nn/attention_score.h): the unfused scaled_dot equals the fused op, the gradients of every score
// under padding and causal masks pass finite differences, and a Transformer built with each score
// decodes the same with and without its key/value cache.
#include <gtest/gtest.h>

#include <cmath>

#include "../ops/gradcheck.h"
#include "attn/decode/search.h"
#include "attn/nn/attention_score.h"
#include "attn/ops.h"
#include "rnn_test_util.h"

namespace attn {
namespace {

using testing::grad_check;
using testing::random_tensor;

AttentionMask masks() {
  AttentionMask m;
  m.key_padding = Tensor::from_ids({0, 0, 0, 0, 0, 1}, {2, 3});
  m.causal = true;
  return m;
}

TEST(MultiHeadScore, UnfusedScaledDotEqualsFused) {
  Tensor q = random_tensor({2, 2, 3, 4}, 61), k = random_tensor({2, 2, 3, 4}, 62), v = random_tensor({2, 2, 3, 4}, 63);
  Var fused = scaled_dot_product_attention(Var(q), Var(k), Var(v), masks());
  Var unfused = multi_head_attend(AttentionScore{}, Var(q), Var(k), Var(v), masks(), {});
  testing::expect_close("unfused scaled_dot vs fused", unfused.value(), fused.value(), 1e-6);
}

TEST(MultiHeadScore, GradCheckEveryScore) {
  const int64_t dk = 3;
  for (ScoreKind kind : {ScoreKind::dot, ScoreKind::bilinear, ScoreKind::additive}) {
    std::vector<Tensor> in{random_tensor({2, 2, 3, dk}, 71), random_tensor({2, 2, 3, dk}, 72),
                           random_tensor({2, 2, 3, dk}, 73)};
    if (kind != ScoreKind::dot) in.push_back(random_tensor({dk, dk}, 74));
    if (kind == ScoreKind::additive)
      in.insert(in.end(), {random_tensor({dk, dk}, 75), random_tensor({dk}, 76), random_tensor({1, dk}, 77)});
    double worst = grad_check(std::string("multi-head ") + score_name(kind), in, [&](const std::vector<Var>& x) {
      AttentionScore s;
      s.kind = kind;
      if (kind != ScoreKind::dot) s.W = x[3];
      if (kind == ScoreKind::additive) s.U = Linear{x[4], x[5], {}}, s.v = x[6];
      return multi_head_attend(s, x[0], x[1], x[2], masks(), {});
    });
    EXPECT_LE(worst, 1.0);
  }
}

TEST(MultiHeadScore, TransformerDecodesTheSameWithAndWithoutCache) {
  for (const char* score : {"dot", "bilinear", "additive"}) {
    TransformerConfig c;
    c.src_vocab = c.tgt_vocab = 13;
    c.d_model = 8;
    c.heads = 2;
    c.d_ff = 16;
    c.encoder_layers = c.decoder_layers = 2;
    c.dropout = 0.0f;
    parse(score, &c.score);
    Transformer m = make_transformer(c, 7);
    EXPECT_EQ(m.decoder[0].multihead_attn.score.kind, parse_score(score));
    SearchOptions o;
    o.beam = 3;
    o.n_best = 3;
    o.max_len = 6;
    std::vector<std::vector<int32_t>> src{{5, 6, 7, 2}, {8, 2}};
    auto cached = search(m, src, o);
    o.use_cache = false;
    auto uncached = search(m, src, o);
    double worst = 0;
    for (size_t i = 0; i < src.size(); ++i)
      for (size_t j = 0; j < cached[i].size(); ++j) {
        EXPECT_EQ(cached[i][j].tokens, uncached[i][j].tokens) << score;
        worst = std::max(worst, std::fabs(cached[i][j].logprob - uncached[i][j].logprob));
      }
    std::printf("[transformer score %s] cached vs uncached beam log-probs max|diff| %.2e (tolerance 1e-4)\n",
                score, worst);
    EXPECT_LE(worst, 1e-4);
  }
}

}  // namespace
}  // namespace attn
