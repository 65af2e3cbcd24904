// A training run stopped and resumed gives the same losses, bit for bit, as one that never
// stopped; a checkpoint is never found half-written after kill -9 during a save.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) {
  std::string d = (fs::temp_directory_path() / ("attn_" + name + "_" + std::to_string(::getpid()))).string();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The first n lines of a real corpus file, written to dir/name.
std::string head(const std::string& src, const std::string& dir, const std::string& name, size_t n) {
  auto lines = data::read_lines(src);
  std::ofstream out(dir + "/" + name);
  for (size_t i = 0; i < n && i < lines.size(); ++i) out << lines[i] << "\n";
  return dir + "/" + name;
}

// dir/train.{en,de}: the first `lines` pairs of the real corpus; dir/spm.model: a tokenizer of `vocab` pieces.
void write_corpus(const std::string& dir, size_t lines, int vocab) {
  std::string shared = std::string(ATTN_SHARED_DIR) + "/data/mt-ende/";
  head(shared + "train.en", dir, "train.en", lines);
  head(shared + "train.de", dir, "train.de", lines);
  data::TokenizerTrainOptions t;
  t.inputs = {dir + "/train.en", dir + "/train.de"};
  t.model_prefix = dir + "/spm";
  t.vocab_size = vocab;
  data::Tokenizer::train(t);
}

// The records of one event ("train", "valid", ...) in a model directory's train_log.jsonl, in order.
std::vector<nlohmann::json> log_events(const std::string& model_dir, const std::string& event) {
  std::vector<nlohmann::json> out;
  std::ifstream in(model_dir + "/train_log.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == event) out.push_back(std::move(j));
  }
  return out;
}

std::vector<double> logged_losses(const std::string& model_dir) {
  std::vector<double> out;
  for (const auto& j : log_events(model_dir, "train")) out.push_back(j["loss"].get<double>());
  return out;
}

TranslationTrainOptions small_run(const std::string& dir, const std::string& model_dir) {
  TranslationTrainOptions o;
  o.model_dir = model_dir;
  o.train_src = dir + "/train.en";
  o.train_tgt = dir + "/train.de";
  o.valid_src = o.valid_tgt = "";  // no dev set unless the test gives one
  o.tokenizer = dir + "/spm.model";
  o.model = TransformerConfig{.d_model = 32, .heads = 2, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 64,
                              .dropout = 0.1f, .norm_first = true, .max_len = 512};  // dropout: its stream must resume exactly too
  o.max_tokens = 512;
  o.schedule.warmup = 5;
  o.schedule.d_model = 32;
  o.schedule.decay = "none";  // the same rates whatever the step budget: a stopped run's budget is not the straight run's
  o.log_every = 1;
  o.checkpoint_minutes = 0;
  o.checkpoint_every = 3;
  o.validate_every = 0;
  return o;
}

// Trains 10 steps straight, and 6 + 4 with a stop and --resume between, in `precision`; the
// logged losses must agree bit for bit.
void expect_resume_is_exact(Precision precision, const std::string& name) {
  std::string dir = temp_dir(name);
  write_corpus(dir, 400, 300);

  TranslationTrainOptions straight = small_run(dir, dir + "/straight");
  straight.precision = precision;
  straight.max_steps = 10;
  train_translation(straight);

  TranslationTrainOptions first = small_run(dir, dir + "/stopped");
  first.precision = precision;
  first.max_steps = 6;
  train_translation(first);
  TranslationTrainOptions second = first;
  second.max_steps = 10;
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

// Per-step training loss of a model directory's log; for a step logged twice (a run killed after
// logging it and resumed from an earlier checkpoint) the later line counts.
std::map<int64_t, double> losses_by_step(const std::string& model_dir) {
  std::map<int64_t, double> out;
  for (const auto& j : log_events(model_dir, "train")) out[j["step"].get<int64_t>()] = j["loss"].get<double>();
  return out;
}

// Runs `attn train` with these arguments in a child process; returns its pid.
pid_t spawn_attn_train(const std::vector<std::string>& args, const std::string& log) {
  pid_t child = fork();
  if (child == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    std::vector<char*> argv{const_cast<char*>(ATTN_BINARY), const_cast<char*>("train")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(ATTN_BINARY, argv.data());
    _exit(127);
  }
  return child;
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
  kill(killed, SIGKILL);
  waitpid(killed, &status, 0);
  auto at_kill = losses_by_step(dir + "/killed");
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
