// Gradient checks (central finite differences) of the LSTM and GRU ops' hand-written BPTT, with
// padding (packed semantics), both directions and initial states, and of the four attention
// scores; plus the packed semantics themselves.
#include <gtest/gtest.h>

#include "../ops/gradcheck.h"
#include "attn/nn/attention_score.h"
#include "attn/ops.h"
#include "attn/ops/rnn.h"

namespace attn {
namespace {

using testing::grad_check;
using testing::random_tensor;

// Flattens every output of an RNN into one vector, so the check covers output, h_n and c_n.
Var flat(const RnnResult& r) {
  std::vector<Var> parts{reshape(r.output, {-1}), reshape(r.h_n, {-1})};
  if (r.c_n.defined()) parts.push_back(reshape(r.c_n, {-1}));
  return concat(parts, 0);
}

TEST(RnnGradCheck, LstmPaddedBothDirections) {
  const int64_t B = 2, T = 3, I = 3, H = 2;
  Tensor lengths = Tensor::from_ids({3, 2}, {B});
  for (bool reverse : {false, true}) {
    std::vector<Tensor> in{random_tensor({B, T, I}, 1), random_tensor({B, H}, 2), random_tensor({B, H}, 3),
                           random_tensor({4 * H, I}, 4), random_tensor({4 * H, H}, 5), random_tensor({4 * H}, 6),
                           random_tensor({4 * H}, 7)};
    double worst = grad_check(reverse ? "lstm reverse, padded" : "lstm forward, padded", in,
                              [&](const std::vector<Var>& v) {
                                return flat(lstm(v[0], v[1], v[2], {v[3], v[4], v[5], v[6]}, lengths, reverse));
                              });
    EXPECT_LE(worst, 1.0);
  }
}

TEST(RnnGradCheck, GruPaddedBothDirections) {
  const int64_t B = 2, T = 3, I = 3, H = 2;
  Tensor lengths = Tensor::from_ids({2, 3}, {B});
  for (bool reverse : {false, true}) {
    std::vector<Tensor> in{random_tensor({B, T, I}, 11), random_tensor({B, H}, 12), random_tensor({3 * H, I}, 14),
                           random_tensor({3 * H, H}, 15), random_tensor({3 * H}, 16), random_tensor({3 * H}, 17)};
    double worst = grad_check(reverse ? "gru reverse, padded" : "gru forward, padded", in,
                              [&](const std::vector<Var>& v) {
                                return flat(gru(v[0], v[1], {v[2], v[3], v[4], v[5]}, lengths, reverse));
                              });
    EXPECT_LE(worst, 1.0);
  }
}

TEST(RnnGradCheck, Cells) {
  const int64_t B = 2, I = 3, H = 2;
  std::vector<Tensor> in{random_tensor({B, I}, 21), random_tensor({B, H}, 22), random_tensor({B, H}, 23),
                         random_tensor({4 * H, I}, 24), random_tensor({4 * H, H}, 25), random_tensor({4 * H}, 26),
                         random_tensor({4 * H}, 27)};
  EXPECT_LE(grad_check("lstm_cell", in, [](const std::vector<Var>& v) {
              RnnResult r = lstm_cell(v[0], v[1], v[2], {v[3], v[4], v[5], v[6]});
              return concat({r.h_n, r.c_n}, 1);
            }), 1.0);
  std::vector<Tensor> g{random_tensor({B, I}, 31), random_tensor({B, H}, 32), random_tensor({3 * H, I}, 33),
                        random_tensor({3 * H, H}, 34), random_tensor({3 * H}, 35), random_tensor({3 * H}, 36)};
  EXPECT_LE(grad_check("gru_cell", g, [](const std::vector<Var>& v) {
              return gru_cell(v[0], v[1], {v[2], v[3], v[4], v[5]});
            }), 1.0);
}

// A padded row gives the same final state and outputs as the row alone, unpadded: the same
// values up to the last bits, since the input projection of 4 rows and of 2 may run different
// GEMM kernels (they do on AVX2 CPUs); a padding step taken would move them by far more.
TEST(RnnPacking, PaddedRowEqualsShortSequence) {
  const int64_t T = 4, I = 3, H = 5;
  RnnWeights w{Var(random_tensor({4 * H, I}, 41)), Var(random_tensor({4 * H, H}, 42)), Var(random_tensor({4 * H}, 43)),
               Var(random_tensor({4 * H}, 44))};
  Tensor x = random_tensor({1, T, I}, 45);
  Tensor short_x = x.slice(1, 0, 2).contiguous();
  for (bool reverse : {false, true}) {
    RnnResult padded = lstm(Var(x), Var(), Var(), w, Tensor::from_ids({2}, {1}), reverse);
    RnnResult alone = lstm(Var(short_x), Var(), Var(), w, {}, reverse);
    std::vector<float> a = padded.h_n.value().to_vector(), b = alone.h_n.value().to_vector();
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << "h_n " << i << (reverse ? " reverse" : "");
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < H; ++j)
        EXPECT_NEAR(padded.output.value().at({0, t, j}), t < 2 ? alone.output.value().at({0, t, j}) : 0.0f, 1e-6);
  }
}

AttentionScore make_score(ScoreKind kind, int64_t d_q, int64_t d_k, uint64_t seed) {
  AttentionScore s;
  s.kind = kind;
  if (kind == ScoreKind::bilinear) s.W = Var(random_tensor({d_q, d_k}, seed));
  if (kind == ScoreKind::additive) {
    s.W = Var(random_tensor({d_q, d_q}, seed));
    s.U = Linear{Var(random_tensor({d_q, d_k}, seed + 1)), Var(random_tensor({d_q}, seed + 2)), {}};
    s.v = Var(random_tensor({1, d_q}, seed + 3));
  }
  return s;
}

TEST(ScoreGradCheck, EveryScoreWithPadding) {
  const int64_t B = 2, Tq = 2, S = 3, d = 4;
  Tensor pad = Tensor::from_ids({0, 0, 0, 0, 1, 1}, {B, 1, S});
  for (ScoreKind kind : {ScoreKind::scaled_dot, ScoreKind::dot, ScoreKind::additive, ScoreKind::bilinear}) {
    AttentionScore s = make_score(kind, d, d, 50);
    std::vector<Tensor> in{random_tensor({B, Tq, d}, 51), random_tensor({B, S, d}, 52)};
    // Parameters as inputs too, so their gradients are checked.
    if (kind == ScoreKind::bilinear) in.push_back(s.W.value());
    if (kind == ScoreKind::additive) in.insert(in.end(), {s.W.value(), s.U.W.value(), s.U.b.value(), s.v.value()});
    double worst = grad_check(std::string("attend ") + score_name(kind), in, [&](const std::vector<Var>& v) {
      AttentionScore p = s;
      if (kind == ScoreKind::bilinear) p.W = v[2];
      if (kind == ScoreKind::additive) p.W = v[2], p.U = Linear{v[3], v[4], {}}, p.v = v[5];
      return attend(p, v[0], score_keys(p, v[1]), v[1], pad);
    });
    EXPECT_LE(worst, 1.0);
  }
}

// Seed 004's worked example through the score function: q.k1 = 112, q.k2 = 96, d_k = 64
// -> 14, 12 -> softmax 0.88, 0.12.
TEST(ScoreExample, ScaledDotOf112And96) {
  Tensor q = Tensor::zeros({1, 1, 64}), k = Tensor::zeros({1, 2, 64});
  q.data<float>()[0] = 8.0f;
  k.data<float>()[0] = 14.0f;
  k.data<float>()[64] = 12.0f;
  AttentionScore s;
  Var e = attention_scores(s, Var(q), Var(k));
  Tensor weights;
  attend(s, Var(q), Var(k), Var(k), {}, &weights);
  std::printf("[seed 004] scores %.1f %.1f  weights %.4f %.4f (expected 14 12, 0.88 0.12)\n", e.value().at({0, 0, 0}),
              e.value().at({0, 0, 1}), weights.at({0, 0, 0}), weights.at({0, 0, 1}));
  EXPECT_FLOAT_EQ(e.value().at({0, 0, 0}), 14.0f);
  EXPECT_FLOAT_EQ(e.value().at({0, 0, 1}), 12.0f);
  EXPECT_NEAR(weights.at({0, 0, 0}), 0.8808, 5e-5);
  EXPECT_NEAR(weights.at({0, 0, 1}), 0.1192, 5e-5);
}

}  // namespace
}  // namespace attn
