// A training run stopped and resumed gives the same losses, validations and weights' average, bit
// for bit, as one that never stopped; a checkpoint is never found half-written after kill -9 during a save.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "attn/data/text_file.h"
#include "attn/data/tokenizer.h"
#include "attn/io/io.h"
#include "attn/models/transformer.h"
#include "attn/train/checkpoint.h"
#include "attn/kernels/precision.h"
#include "attn/train/translation_trainer.h"
#include "train/train_fixture.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

using namespace attn::testing;

// The weights' average (train.ema_decay) of a model directory's newest checkpoint.
std::map<std::string, Tensor> newest_ema(const std::string& model_dir) {
  return io::load_safetensors(list_checkpoints(model_dir).back() + "/ema.safetensors");
}

// Trains 10 steps straight, and 6 + 4 with a stop and --resume between, in `precision`, with the
// weights' average on and a dev set validated every 4 steps (the average is what is validated):
// the logged losses, the validations (dev loss, BLEU and chrF of greedy decoding) and the average
// must agree bit for bit.
void expect_resume_is_exact(Precision precision, const std::string& name) {
  std::string dir = temp_dir(name);
  write_corpus(dir, 400, 300);
  head(std::string(ATTN_SHARED_DIR) + "/data/mt-ende/dev.en", dir, "dev.en", 30);
  head(std::string(ATTN_SHARED_DIR) + "/data/mt-ende/dev.de", dir, "dev.de", 30);
  auto run = [&](const std::string& model_dir, int64_t steps) {
    TranslationTrainOptions o = small_run(dir, model_dir);
    o.precision = precision;
    o.max_steps = steps;
    o.ema_decay = 0.9;
    o.valid_src = dir + "/dev.en";
    o.valid_tgt = dir + "/dev.de";
    o.validate_every = 4;
    return o;
  };
  train_translation(run(dir + "/straight", 10));
  train_translation(run(dir + "/stopped", 6));
  TranslationTrainOptions second = run(dir + "/stopped", 10);
  second.resume = true;
  train_translation(second);

  std::vector<double> a = logged_losses(dir + "/straight"), b = logged_losses(dir + "/stopped");
  ASSERT_EQ(a.size(), 10u);
  ASSERT_EQ(b.size(), 10u);
  for (size_t i = 0; i < a.size(); ++i) {
    std::printf("[resume %s] step %zu loss %.17g %.17g\n", precision_name(precision), i + 1, a[i], b[i]);
    EXPECT_EQ(a[i], b[i]) << "step " << i + 1;  // bit for bit
  }
  EXPECT_NE(a[0], a[9]);  // it did train
  std::map<int64_t, nlohmann::json> resumed_valid;
  for (const auto& v : log_events(dir + "/stopped", "valid")) resumed_valid[v["step"].get<int64_t>()] = v;
  int after_resume = 0;
  for (const auto& v : log_events(dir + "/straight", "valid")) {
    const int64_t step = v["step"].get<int64_t>();
    if (!resumed_valid.count(step)) continue;
    after_resume += step > 6;
    for (const char* key : {"dev_nll", "dev_bleu", "dev_chrf"})
      EXPECT_EQ(v[key].get<double>(), resumed_valid[step][key].get<double>()) << key << " at step " << step;
  }
  EXPECT_GE(after_resume, 2);  // steps 8 and 10 validated by both runs
  const std::map<std::string, Tensor> ema_a = newest_ema(dir + "/straight"), ema_b = newest_ema(dir + "/stopped");
  ASSERT_EQ(ema_a.size(), ema_b.size());
  for (const auto& [key, t] : ema_a) {
    const Tensor& u = ema_b.at(key);
    ASSERT_EQ(t.nbytes(), u.nbytes()) << key;
    EXPECT_EQ(std::memcmp(t.raw_data(), u.raw_data(), static_cast<size_t>(t.nbytes())), 0) << key;  // bit for bit
  }
  fs::remove_all(dir);
}

TEST(Resume, StoppedAndResumedRunGivesTheSameLossesBitForBit) { expect_resume_is_exact(Precision::fp32, "resume"); }

// bf16 products (what train.precision auto picks where the CPU has them): the rounded weight copies are remade from the
// restored f32 masters, so a resumed run is exact too.
TEST(Resume, Bf16RunResumesBitForBit) { expect_resume_is_exact(Precision::bf16, "resume_bf16"); }

// Validating (dev loss, greedy decoding, BLEU) between steps must leave the run untouched: no
// random numbers drawn, no data read, no parameter or optimizer state changed. With dropout on,
// a run validating every 3 steps gives the same losses, bit for bit, as one that never validates.
TEST(Validation, DoesNotDisturbTheTrainingRun) {
  std::string dir = temp_dir("validation");
  write_corpus(dir, 400, 300);
  head(dir + "/train.en", dir, "dev.en", 40);
  head(dir + "/train.de", dir, "dev.de", 40);

  TranslationTrainOptions quiet = small_run(dir, dir + "/quiet");
  quiet.max_steps = 10;
  train_translation(quiet);

  TranslationTrainOptions validating = small_run(dir, dir + "/validating");
  validating.max_steps = 10;
  validating.valid_src = dir + "/dev.en";
  validating.valid_tgt = dir + "/dev.de";
  validating.validate_every = 3;
  train_translation(validating);

  std::vector<double> a = logged_losses(dir + "/quiet"), b = logged_losses(dir + "/validating");
  ASSERT_EQ(a.size(), 10u);
  ASSERT_EQ(b.size(), 10u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "step " << i + 1;
  EXPECT_GE(log_events(dir + "/validating", "valid").size(), 3u);  // steps 3, 6, 9 (and the end): it did validate
  fs::remove_all(dir);
}

// With only an epoch budget, the progress lines carry an ETA (the epoch's steps, counted ahead)
// and stay in epoch 1 to the last step, which ends the epoch and the run.
TEST(Progress, EpochBudgetHasAnEtaAndTheLastStepIsInItsEpoch) {
  std::string dir = temp_dir("epoch_budget");
  write_corpus(dir, 200, 300);
  TranslationTrainOptions o = small_run(dir, dir + "/run");
  o.max_epochs = 1;
  train_translation(o);
  std::vector<nlohmann::json> lines = log_events(dir + "/run", "train");
  ASSERT_GE(lines.size(), 3u);
  for (const auto& j : lines) {
    EXPECT_EQ(j["epoch"].get<int64_t>(), 1) << "step " << j["step"];
    ASSERT_TRUE(j["eta"].is_number()) << "step " << j["step"] << ": no ETA";  // infinity is written as null
  }
  EXPECT_GT(lines[1]["eta"].get<double>(), 0.0);
  EXPECT_EQ(lines.back()["eta"].get<double>(), 0.0);
  fs::remove_all(dir);
}

// The defaults of `attn train` (bf16 products where the CPU has them, the rate decaying to zero
// over the step budget): a run killed with SIGKILL mid-way and resumed with --resume and the same
// budget logs the same losses, bit for bit, as one that never stopped.
TEST(Resume, KilledDecayingRunResumesBitForBit) {
  std::string dir = temp_dir("resume_kill");
  write_corpus(dir, 2000, 500);
  const int64_t budget = 40;
  auto args = [&](const std::string& model_dir) {
    std::vector<std::string> a = {"--model-dir", model_dir, "--max-steps", std::to_string(budget), "--threads", "2"};
    for (std::string kv : {"data.train_src=" + dir + "/train.en", "data.train_tgt=" + dir + "/train.de",
                           "data.tokenizer=" + dir + "/spm.model", std::string("data.valid_src="),
                           std::string("model.d_model=64"), std::string("model.d_ff=128"),
                           std::string("model.dropout=0.1"), std::string("train.max_tokens=1024"),
                           std::string("train.warmup=5"), std::string("train.log_every=1"),
                           std::string("train.checkpoint_every=5"), std::string("train.checkpoint_minutes=0"),
                           std::string("train.precision=auto"), std::string("train.decay=linear")}) {
      a.push_back("--set");
      a.push_back(kv);
    }
    return a;
  };
  int status = 0;
  pid_t straight = spawn_attn_train(args(dir + "/straight"), dir + "/straight.log");
  waitpid(straight, &status, 0);
  ASSERT_EQ(status, 0) << "see " << dir << "/straight.log";

  // Kill the second run once it has saved step 10 (or later), then resume it.
  pid_t killed = spawn_attn_train(args(dir + "/killed"), dir + "/killed.log");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto saved_past_10 = [&] {
    auto all = list_checkpoints(dir + "/killed");
    return !all.empty() && all.back() >= dir + "/killed/checkpoints/step-00000010";
  };
  while (!saved_past_10() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(waitpid(killed, &status, WNOHANG), 0) << "the run ended before the kill; see " << dir << "/killed.log";
  kill(killed, SIGKILL);
  waitpid(killed, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the kill did not end the run";
  auto at_kill = losses_by_step(dir + "/killed");
  // The kill landed mid-run: the log stops short of the budget and past the checkpoint waited for.
  ASSERT_FALSE(at_kill.empty());
  ASSERT_LT(at_kill.rbegin()->first, budget) << "the run had finished its steps before the kill";
  ASSERT_GE(at_kill.rbegin()->first, 10);
  std::printf("[kill -9 + resume] killed after step %lld of %lld\n",
              static_cast<long long>(at_kill.empty() ? 0 : at_kill.rbegin()->first), static_cast<long long>(budget));
  std::vector<std::string> resume = args(dir + "/killed");
  resume.push_back("--resume");
  pid_t resumed = spawn_attn_train(resume, dir + "/resumed.log");
  waitpid(resumed, &status, 0);
  ASSERT_EQ(status, 0) << "see " << dir << "/resumed.log";

  auto a = losses_by_step(dir + "/straight"), b = losses_by_step(dir + "/killed");
  ASSERT_EQ(a.size(), static_cast<size_t>(budget));
  ASSERT_EQ(b.size(), static_cast<size_t>(budget));
  for (const auto& [step, loss] : a) EXPECT_EQ(loss, b[step]) << "step " << step;  // bit for bit
  EXPECT_NE(a.begin()->second, a.rbegin()->second);  // it did train
  fs::remove_all(dir);
}

TEST(Checkpoint, NeverHalfWrittenAfterKill9) {
  std::string dir = temp_dir("kill9");
  TransformerConfig c;
  c.d_model = 128;
  c.d_ff = 512;
  c.encoder_layers = c.decoder_layers = 2;
  c.heads = 4;
  c.src_vocab = c.tgt_vocab = 4000;
  Transformer m = make_transformer(c, 1);
  for (int round = 0; round < 4; ++round) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      Adam adam(m.parameters());
      for (int64_t step = 1;; ++step) {
        for (auto& [name, p] : adam.params) {
          Tensor v = p.value();
          v.data<float>()[0] = static_cast<float>(step);  // which save this is
        }
        save_checkpoint(dir, step + round * 1000000, adam, {{"marker", step}}, 2);
      }
    }
    // Kill it at some moment after this round's first save has completed (the machine may be slow).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto round_saved = [&] {
      auto all = list_checkpoints(dir);
      return !all.empty() && all.back().find(round == 0 ? "step-0000" : "step-0" + std::to_string(round)) != std::string::npos;
    };
    while (!round_saved() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(37 + 61 * round));
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    auto all = list_checkpoints(dir);
    ASSERT_FALSE(all.empty()) << "no checkpoint completed in round " << round;
    for (const std::string& path : all) {
      Transformer fresh = make_transformer(c, 2);
      Adam adam(fresh.parameters());
      nlohmann::json state = load_checkpoint(path, adam);  // throws on a partial file
      float marker = static_cast<float>(state["marker"].get<int64_t>());
      for (auto& [name, p] : adam.params) EXPECT_EQ(p.value().data<float>()[0], marker) << path << " " << name;
    }
    std::printf("[kill -9] round %d: %zu complete checkpoints, newest %s\n", round, all.size(),
                fs::path(all.back()).filename().c_str());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
