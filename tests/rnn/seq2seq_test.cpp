// The RNN encoder-decoder (`model: rnn`) against PyTorch (tests/rnn/torch_rnn.py, fixtures of
// make_rnn_fixtures.py): logits, the label-smoothed loss and every parameter's gradient of one
// training step, and the free-running (teacher forcing 0) logits; for LSTM and GRU, bidirectional
// or not, with and without the bridge, and three score functions. Then the model through the
// shared machinery: model directory, beam search, scoring, scheduled sampling.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "attn/decode/score.h"
#include "attn/decode/search.h"
#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/ops.h"
#include "rnn_test_util.h"

namespace attn {
namespace {

using testing::expect_close;
using testing::load_rnn_fixture;

constexpr double kTol = 2e-5;

struct Fixture {
  RnnSeq2Seq model;
  std::map<std::string, Tensor> t;
};

Fixture load(const std::string& name) {
  Fixture f;
  f.t = load_rnn_fixture("seq2seq_" + name);
  std::string json_path = std::string(ATTN_TEST_DATA) + "/rnn/seq2seq_" + name + ".json";
  RnnConfig c = rnn_config_from_json(read_json_file(json_path), json_path);
  std::map<std::string, Tensor> params;
  for (const auto& [k, v] : f.t)
    if (k.rfind("grad.", 0) != 0 && k != "src" && k != "tgt_in" && k != "tgt_out" && k != "logits" &&
        k != "loss" && k != "logits_free")
      params[k] = v;
  f.model = rnn_seq2seq_from_tensors(c, params, json_path);
  return f;
}

void check_parity(const std::string& name) {
  Fixture f = load(name);
  RnnSeq2Seq& m = f.model;
  Tape tape;
  Var logits, loss;
  {
    TapeScope scope(tape);
    logits = rnn_logits(m, f.t["src"], f.t["tgt_in"], Context{});
    loss = cross_entropy(logits, f.t["tgt_out"], 0.1f, m.config.pad_id);
    tape.backward(loss);
  }
  expect_close(name + " logits", logits.value(), f.t["logits"], kTol);
  expect_close(name + " loss", loss.value().reshape({}), f.t["loss"], kTol);
  for (const auto& [key, v] : m.parameters()) {
    ASSERT_TRUE(v.grad().defined()) << name << ": no gradient for " << key;
    expect_close(name + " grad " + key, v.grad(), f.t["grad." + key], kTol);
  }
  NoGrad no_grad;
  Var free = rnn_logits(m, f.t["src"], f.t["tgt_in"], Context{}, DecoderFeeding{0.0f, nullptr});
  expect_close(name + " free-running logits", free.value(), f.t["logits_free"], kTol);
}

TEST(Seq2SeqParity, LstmBidirectionalAdditiveTied) { check_parity("lstm_additive"); }
TEST(Seq2SeqParity, LstmBridgeBilinearUntied) { check_parity("lstm_bridge_bilinear"); }
TEST(Seq2SeqParity, GruUnidirectionalDotNoInputFeeding) { check_parity("gru_dot"); }
TEST(Seq2SeqParity, GruBridgeAdditive) { check_parity("gru_bridge_additive"); }

std::vector<std::vector<int32_t>> sources() { return {{5, 6, 7, 8, 2}, {9, 4, 2}, {3, 2}}; }

// Scores of the beam's hypotheses equal score_translations of the same tokens: the step decoder
// and the teacher-forced decoder agree, row reordering included.
TEST(Seq2SeqSearch, BeamLogProbsEqualTeacherForcedScores) {
  Seq2Seq m = as_seq2seq(load("lstm_additive").model);
  SearchOptions o;
  o.beam = 3;
  o.n_best = 3;
  o.max_len = 8;
  auto hyps = search(m, sources(), o);
  ASSERT_EQ(hyps.size(), 3u);
  double worst = 0;
  for (size_t i = 0; i < hyps.size(); ++i)
    for (const Hypothesis& h : hyps[i]) {
      if (h.tokens.size() + 1 > 8) continue;  // unfinished: no eos in its log-prob
      double s = score_translations(m, {sources()[i]}, {h.tokens})[0];
      worst = std::max(worst, std::fabs(s - h.logprob));
    }
  std::printf("[rnn search] beam log-prob vs teacher-forced score: max|diff| %.2e (tolerance 1e-4)\n", worst);
  EXPECT_LE(worst, 1e-4);
  // Greedy equals the argmax chain of the free-running decoder.
  o.beam = 1;
  o.n_best = 1;
  auto greedy = search(m, {sources()[0]}, o);
  Tensor src = Tensor::from_ids(sources()[0], {1, 5});
  Tensor tgt_in = Tensor::from_ids(std::vector<int32_t>(8, m.common().bos_id), {1, 8});
  NoGrad no_grad;
  Tensor free = rnn_logits(std::get<RnnSeq2Seq>(m.net), src, tgt_in, Context{}, DecoderFeeding{0.0f, nullptr}).value();
  std::vector<int32_t> chain;
  for (int64_t t = 0; t < 8; ++t) {
    int32_t best = 0;
    for (int64_t v = 1; v < free.size(2); ++v)
      if (free.at({0, t, v}) > free.at({0, t, best})) best = static_cast<int32_t>(v);
    if (best == m.common().eos_id) break;
    chain.push_back(best);
  }
  EXPECT_EQ(greedy[0][0].tokens, chain);
}

TEST(Seq2SeqModelDir, SaveLoadRoundTrip) {
  Seq2Seq m = as_seq2seq(load("lstm_bridge_bilinear").model);
  std::string dir = ::testing::TempDir() + "/attn_rnn_model";
  std::filesystem::remove_all(dir);
  save_seq2seq(m, dir, {{"tokenizer", "spm.model"}});
  Seq2Seq back = load_seq2seq(dir);
  ASSERT_EQ(back.kind(), ModelKind::rnn);
  EXPECT_EQ(back.common().score, ScoreKind::bilinear);
  EXPECT_EQ(std::get<RnnSeq2Seq>(back.net).config.encoder_hidden, 6);
  auto a = score_translations(m, sources(), {{4, 5}, {7}, {}});
  auto b = score_translations(back, sources(), {{4, 5}, {7}, {}});
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
  try {
    load_transformer(dir);
    FAIL() << "an rnn model directory loaded as a transformer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rnn"), std::string::npos) << e.what();
  }
}

TEST(Seq2SeqConfig, ErrorsNameTheField) {
  RnnConfig c;
  c.d_model = 8;
  c.score = ScoreKind::dot;
  c.encoder_hidden = 6;  // bidirectional: 12 != 8
  try {
    c.validate();
    FAIL() << "dot score with mismatched sizes accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("score dot"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse("cosine", &c.score), Error);  // a score is parsed from its name once
}

// Scheduled sampling: p = 1 is teacher forcing, p = 0 free-running, and in between the logits
// differ from both (some tokens replaced) while staying deterministic for a given stream.
TEST(ScheduledSampling, RnnRatiosAndSchedule) {
  Fixture f = load("lstm_additive");
  NoGrad no_grad;
  Rng rng(5);
  Tensor full = rnn_logits(f.model, f.t["src"], f.t["tgt_in"], Context{}, DecoderFeeding{1.0f, &rng}).value();
  expect_close("rnn feeding 1.0 = teacher forcing", full, f.t["logits"], kTol);
  Tensor none = rnn_logits(f.model, f.t["src"], f.t["tgt_in"], Context{}, DecoderFeeding{0.0f, &rng}).value();
  expect_close("rnn feeding 0.0 = free-running", none, f.t["logits_free"], kTol);
  TeacherForcingSchedule s{"linear", 1.0, 0.25, 100};
  EXPECT_DOUBLE_EQ(teacher_forcing_at(s, 0), 1.0);
  EXPECT_DOUBLE_EQ(teacher_forcing_at(s, 50), 0.625);
  EXPECT_DOUBLE_EQ(teacher_forcing_at(s, 1000), 0.25);
  s.kind = "inverse_sigmoid";
  EXPECT_NEAR(teacher_forcing_at(s, 0), 0.25 + 0.75 * 100.0 / 101.0, 1e-12);
  s.kind = "exponential";
  EXPECT_NEAR(teacher_forcing_at(s, 100), 0.25 + 0.75 * std::exp(-1.0), 1e-12);
}

// The Transformer's two-pass mix: with p = 0 every non-pad position t > 0 takes the first pass's
// prediction at t - 1; with p = 1 the input is the gold one; pad stays pad.
TEST(ScheduledSampling, TransformerMixedInput) {
  auto ids = [](const Tensor& t) {
    Tensor c = t.contiguous();
    return std::vector<int32_t>(c.data<int32_t>(), c.data<int32_t>() + c.numel());
  };
  Tensor gold = Tensor::from_ids({1, 4, 5, 6, 1, 7, 0, 0}, {2, 4});
  Tensor pred = Tensor::from_ids({9, 8, 7, 3, 10, 11, 12, 13}, {2, 4});
  std::vector<int32_t> want{1, 9, 8, 7, 1, 10, 0, 0};
  EXPECT_EQ(ids(mix_decoder_input(gold, pred, 0, DecoderFeeding{0.0f, nullptr})), want);
  EXPECT_EQ(ids(mix_decoder_input(gold, pred, 0, DecoderFeeding{1.0f, nullptr})), ids(gold));
  Rng rng(3);
  std::vector<int32_t> half = ids(mix_decoder_input(gold, pred, 0, DecoderFeeding{0.5f, &rng})), g = ids(gold);
  for (size_t i = 0; i < 8; ++i) EXPECT_TRUE(half[i] == g[i] || half[i] == want[i]) << i;

  // In between, each replaceable position takes the prediction exactly when its coin (the
  // stream's next uniform, positions in row order) lands at or above p, so the share replaced is
  // 1 - p: checked coin by coin against a copy of the stream, and in total against the binomial
  // bounds (5 standard deviations) over 50 x 40 positions.
  const int64_t B = 50, T = 41;
  std::vector<int32_t> gold_ids(B * T), pred_ids(B * T);
  Rng fill(11);
  for (int64_t i = 0; i < B * T; ++i) {
    gold_ids[i] = 1 + static_cast<int32_t>(fill.below(30));
    pred_ids[i] = 100 + gold_ids[i];  // never equal to a gold token
  }
  for (float p : {0.5f, 0.25f}) {
    Rng coins(17), replay(17);
    std::vector<int32_t> out = ids(mix_decoder_input(Tensor::from_ids(gold_ids, {B, T}), Tensor::from_ids(pred_ids, {B, T}),
                                                     0, DecoderFeeding{p, &coins}));
    int64_t replaced = 0;
    for (int64_t b = 0; b < B; ++b) {
      EXPECT_EQ(out[b * T], gold_ids[b * T]);  // position 0 (bos) is never replaced
      for (int64_t t = 1; t < T; ++t) {
        const bool sample = replay.uniform() >= p;
        ASSERT_EQ(out[b * T + t], sample ? pred_ids[b * T + t - 1] : gold_ids[b * T + t]) << b << "," << t;
        replaced += sample;
      }
    }
    const double n = B * (T - 1), mean = n * (1 - p), sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(replaced), mean, 5 * sd) << "p = " << p;
  }
}

// Training moves the RNN: plain SGD steps on one batch lower its loss.
TEST(Seq2SeqTraining, LossDecreasesOnOneBatch) {
  Fixture f = load("gru_dot");
  RnnSeq2Seq& m = f.model;
  double first = 0, last = 0;
  for (int it = 0; it < 40; ++it) {
    Tape tape;
    Var loss;
    {
      TapeScope scope(tape);
      loss = cross_entropy(rnn_logits(m, f.t["src"], f.t["tgt_in"], Context{}), f.t["tgt_out"], 0.0f, m.config.pad_id);
      tape.backward(loss);
    }
    double l = loss.value().data<float>()[0];
    if (it == 0) first = l;
    last = l;
    for (auto& [k, v] : m.parameters()) {
      if (!v.grad().defined()) continue;
      float* p = v.value().data<float>();
      const float* g = v.grad().contiguous().data<float>();
      for (int64_t i = 0; i < v.value().numel(); ++i) p[i] -= 0.5f * g[i];
      v.zero_grad();
    }
  }
  std::printf("[rnn training] loss %.4f -> %.4f after 40 SGD steps (must fall below 0.7x)\n", first, last);
  EXPECT_LT(last, 0.7 * first);
}

}  // namespace
}  // namespace attn
