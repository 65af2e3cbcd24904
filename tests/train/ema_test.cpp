// The weights' moving average (train.ema_decay): its rule against a plain loop in double, an
// exact resume, and the model directory holding the average with the raw weights beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "attn/io/io.h"
#include "attn/io/json.h"
#include "attn/models/seq2seq.h"
#include "attn/train/checkpoint.h"
#include "attn/train/ema.h"
#include "attn/train/translation_trainer.h"
#include "train/train_fixture.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using namespace attn::testing;

TEST(Ema, WarmUpDecayIsTheSmallerOfDecayAndTheStepRatio) {
  EXPECT_DOUBLE_EQ(ema_decay_at(0.999, 1), 2.0 / 11.0);
  EXPECT_DOUBLE_EQ(ema_decay_at(0.999, 90), 91.0 / 100.0);
  EXPECT_DOUBLE_EQ(ema_decay_at(0.9, 1000), 0.9);
}

// Three updates of a two-tensor "model" whose weights move between them, against
// ema_t = d_t ema_{t-1} + (1 - d_t) theta_t computed in double.
TEST(Ema, UpdateFollowsTheRule) {
  std::vector<std::pair<std::string, Var>> params{
      {"a", Var(Tensor::from_vector({1.0f, -2.0f, 3.0f}, {3}), true)},
      {"b", Var(Tensor::from_vector({0.5f, 0.25f}, {2}), true)}};
  Ema e = make_ema(params, 0.5);
  std::vector<double> ref{1.0, -2.0, 3.0, 0.5, 0.25};
  for (int64_t t = 1; t <= 3; ++t) {
    std::vector<double> theta;
    for (auto& [name, p] : params) {
      float* x = p.value().data<float>();
      for (int64_t j = 0; j < p.value().numel(); ++j) {
        x[j] = x[j] * 1.5f + static_cast<float>(t);
        theta.push_back(x[j]);
      }
    }
    ema_update(e, params, t);
    const double d = std::min(0.5, (1.0 + t) / (10.0 + t));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = d * ref[i] + (1 - d) * theta[i];
  }
  std::vector<double> got;
  for (auto& [name, avg] : e.shadow)
    for (int64_t j = 0; j < avg.numel(); ++j) got.push_back(avg.data<float>()[j]);
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-5 * (1 + std::abs(ref[i]))) << i;
  // The average is a copy: the weights themselves moved further.
  EXPECT_NE(params[0].second.value().data<float>()[0], e.shadow[0].second.data<float>()[0]);
}

std::map<std::string, Tensor> weights_of(const std::string& dir) { return io::load_safetensors(dir + "/model.safetensors"); }

void expect_same(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b, bool same) {
  ASSERT_EQ(a.size(), b.size());
  bool all_equal = true;
  for (const auto& [name, t] : a) {
    const Tensor& u = b.at(name);
    ASSERT_EQ(t.numel(), u.numel()) << name;
    for (int64_t j = 0; j < t.numel(); ++j) all_equal = all_equal && t.data<float>()[j] == u.data<float>()[j];
  }
  EXPECT_EQ(all_equal, same);
}

// 8 steps straight and 5 + 3 with --resume between: the averaged model and the raw weights agree
// bit for bit; the average is not the raw weights; raw/ is a model directory of its own.
TEST(Ema, ResumedRunKeepsTheAverageExactly) {
  std::string dir = temp_dir("ema");
  write_corpus(dir, 300, 300);
  TranslationTrainOptions straight = small_run(dir, dir + "/straight");
  straight.ema_decay = 0.9;
  straight.max_steps = 8;
  train_translation(straight);

  TranslationTrainOptions first = small_run(dir, dir + "/stopped");
  first.ema_decay = 0.9;
  first.max_steps = 5;
  train_translation(first);
  TranslationTrainOptions second = first;
  second.max_steps = 8;
  second.resume = true;
  train_translation(second);

  expect_same(weights_of(dir + "/straight"), weights_of(dir + "/stopped"), true);
  expect_same(weights_of(dir + "/straight/raw"), weights_of(dir + "/stopped/raw"), true);
  expect_same(weights_of(dir + "/straight"), weights_of(dir + "/straight/raw"), false);
  // The checkpoint of the last step holds the same average the model directory does.
  expect_same(io::load_safetensors(latest_checkpoint(dir + "/straight") + "/ema.safetensors"),
              weights_of(dir + "/straight"), true);
  EXPECT_TRUE(fs::exists(dir + "/straight/raw/spm.model"));
  Seq2Seq raw = load_seq2seq(dir + "/straight/raw");
  EXPECT_EQ(raw.common().tgt_vocab, 300);
  const nlohmann::json config = io::parse_json(io::read_file(dir + "/straight/config.json"), "config.json");
  EXPECT_DOUBLE_EQ(config["training"]["ema_decay"].get<double>(), 0.9);
  fs::remove_all(dir);
}

// A run that started without an average and resumes with one starts it from the restored weights.
TEST(Ema, ResumingWithAnAverageStartsItFromTheRestoredWeights) {
  std::string dir = temp_dir("ema_late");
  write_corpus(dir, 300, 300);
  TranslationTrainOptions first = small_run(dir, dir + "/run");
  first.max_steps = 3;
  train_translation(first);
  TranslationTrainOptions second = first;
  second.ema_decay = 0.9;
  second.max_steps = 4;
  second.resume = true;
  train_translation(second);
  EXPECT_TRUE(fs::exists(latest_checkpoint(dir + "/run") + "/ema.safetensors"));
  expect_same(weights_of(dir + "/run"), weights_of(dir + "/run/raw"), false);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
