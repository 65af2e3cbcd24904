// Runs that never lose work: --resume past a corrupt checkpoint, against a changed model, with no
// checkpoint; NaN steps skipped and a run of them stopped; SIGTERM / SIGINT ending training with a
// checkpoint; attn average refusing to replace a model.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/train/checkpoint.h"
#include "train/train_fixture.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using namespace attn::testing;

// The corpus and tokenizer every test here trains on, made once.
class RobustRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir("robust_run");
    write_corpus(dir_, 400, 300);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static inline std::string dir_;
};

std::string run_capturing_stderr(const TranslationTrainOptions& o) {
  ::testing::internal::CaptureStderr();
  try {
    train_translation(o);
  } catch (...) {
    std::string err = ::testing::internal::GetCapturedStderr();
    throw;
  }
  return ::testing::internal::GetCapturedStderr();
}

// The newest checkpoint's model.safetensors cut in half: --resume says so, takes the one before,
// and the run still matches one that never stopped, bit for bit.
TEST_F(RobustRun, ResumeFallsBackToTheNewestValidCheckpoint) {
  TranslationTrainOptions straight = small_run(dir_, dir_ + "/fallback_straight");
  straight.max_steps = 10;
  train_translation(straight);
  TranslationTrainOptions first = small_run(dir_, dir_ + "/fallback");
  first.max_steps = 6;
  train_translation(first);  // checkpoints at steps 3 and 6
  const std::string newest = dir_ + "/fallback/checkpoints/step-00000006/model.safetensors";
  const std::string bytes = io::read_file(newest);
  io::write_file_atomic(newest, bytes.substr(0, bytes.size() / 2));
  TranslationTrainOptions second = first;
  second.max_steps = 10;
  second.resume = true;
  const std::string err = run_capturing_stderr(second);
  EXPECT_NE(err.find("step-00000006 cannot be restored"), std::string::npos) << err;
  EXPECT_NE(err.find("resuming from " + dir_ + "/fallback/checkpoints/step-00000003"), std::string::npos) << err;
  auto a = losses_by_step(dir_ + "/fallback_straight"), b = losses_by_step(dir_ + "/fallback");
  ASSERT_EQ(a.size(), 10u);
  ASSERT_EQ(b.size(), 10u);
  for (const auto& [step, loss] : a) EXPECT_EQ(loss, b[step]) << "step " << step;
}

TEST_F(RobustRun, ResumeWithEveryCheckpointCorruptIsAnError) {
  TranslationTrainOptions o = small_run(dir_, dir_ + "/all_corrupt");
  o.max_steps = 3;
  train_translation(o);
  for (const std::string& c : list_checkpoints(o.model_dir)) io::write_file_atomic(c + "/optimizer.safetensors", "junk");
  o.resume = true;
  o.max_steps = 6;
  try {
    run_capturing_stderr(o);
    FAIL() << "a run whose checkpoints are all corrupt must not start over silently";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none of the 1 checkpoints"), std::string::npos) << e.what();
  }
}

TEST_F(RobustRun, ResumeRefusesAChangedModelSettingAndNamesIt) {
  TranslationTrainOptions o = small_run(dir_, dir_ + "/changed");
  o.max_steps = 3;
  train_translation(o);
  o.resume = true;
  o.max_steps = 6;  // a larger budget is no change of model
  std::get<TransformerConfig>(o.model).d_ff = 128;
  try {
    run_capturing_stderr(o);
    FAIL() << "a changed model.d_ff must be refused";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("model.d_ff is 64"), std::string::npos) << m;
    EXPECT_NE(m.find("but 128 now"), std::string::npos) << m;
  }
  std::get<TransformerConfig>(o.model).d_ff = 64;
  run_capturing_stderr(o);
  EXPECT_EQ(losses_by_step(o.model_dir).size(), 6u) << "unchanged, it resumes";
}

TEST_F(RobustRun, ResumeWithNothingToResumeSaysSoAndStartsANewRun) {
  TranslationTrainOptions o = small_run(dir_, dir_ + "/nothing");
  o.max_steps = 2;
  o.resume = true;
  const std::string err = run_capturing_stderr(o);
  EXPECT_NE(err.find("--resume: nothing to resume in " + o.model_dir + " (no checkpoint): starting a new run"),
            std::string::npos) << err;
  EXPECT_EQ(losses_by_step(o.model_dir).size(), 2u);
}

// A rate of 1e30 makes the weights huge after step 1, so every later loss is NaN: those steps are
// skipped and reported, and train.max_bad_steps of them end the run with the step-1 checkpoint newest.
TEST_F(RobustRun, NanLossStepsAreSkippedAndARunOfThemStopsTheRun) {
  TranslationTrainOptions o = small_run(dir_, dir_ + "/nan");
  o.schedule.kind = "constant";
  o.schedule.lr = 1e30;
  o.checkpoint_every = 1;
  o.max_steps = 20;
  o.max_bad_steps = 3;
  try {
    run_capturing_stderr(o);
    FAIL() << "a run whose loss stays NaN must stop with an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NaN or infinite in 3 steps in a row"), std::string::npos) << m;
    EXPECT_NE(m.find("step-00000001"), std::string::npos) << m;
  }
  EXPECT_EQ(log_events(o.model_dir, "skipped").size(), 3u);
  EXPECT_EQ(log_events(o.model_dir, "train").size(), 1u);
  auto all = list_checkpoints(o.model_dir);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(fs::path(all.back()).filename(), "step-00000001");
  EXPECT_TRUE(fs::exists(o.model_dir + "/curves.svg"));
}

std::vector<std::string> cli_run(const std::string& dir, const std::string& model_dir, int64_t steps) {
  return with_sets({"--model-dir", model_dir, "--max-steps", std::to_string(steps), "--threads", "1"},
                   {"data.train_src=" + dir + "/train.en", "data.train_tgt=" + dir + "/train.de",
                    "data.tokenizer=" + dir + "/spm.model", "data.valid_src=", "model.d_model=32", "model.d_ff=64",
                    "model.heads=2", "model.encoder_layers=1", "model.decoder_layers=1", "train.max_tokens=512",
                    "train.warmup=5", "train.log_every=1", "train.checkpoint_every=1000",
                    "train.checkpoint_minutes=0", "train.decay=none"});
}

// Waits until the run has logged `steps` training lines (false when it ended or 60 s passed).
bool wait_for_steps(const std::string& model_dir, pid_t child, size_t steps) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(model_dir + "/train_log.jsonl") && log_events(model_dir, "train").size() >= steps) return true;
    if (waitpid(child, nullptr, WNOHANG) != 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// SIGTERM: the step in progress ends, its checkpoint is written, exit 0; --resume continues.
TEST_F(RobustRun, SigtermEndsTrainingWithACheckpointAndExitZero) {
  const std::string model_dir = dir_ + "/sigterm";
  pid_t child = spawn_attn_train(cli_run(dir_, model_dir, 100000), dir_ + "/sigterm.log");
  ASSERT_TRUE(wait_for_steps(model_dir, child, 3)) << "see " << dir_ << "/sigterm.log";
  kill(child, SIGTERM);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by a signal; see " << dir_ << "/sigterm.log";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see " << dir_ << "/sigterm.log";
  const int64_t last = log_events(model_dir, "train").back()["step"].get<int64_t>();
  auto all = list_checkpoints(model_dir);
  ASSERT_EQ(all.size(), 1u) << "only the stop's checkpoint (checkpoint_every is 1000)";
  char name[32];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(last));
  EXPECT_EQ(fs::path(all.back()).filename(), name);
  EXPECT_NE(io::read_file(dir_ + "/sigterm.log").find("interrupted: stopped after step"), std::string::npos);
  std::vector<std::string> resume = cli_run(dir_, model_dir, last + 2);
  resume.push_back("--resume");
  pid_t resumed = spawn_attn_train(resume, dir_ + "/sigterm_resumed.log");
  waitpid(resumed, &status, 0);
  ASSERT_EQ(status, 0) << "see " << dir_ << "/sigterm_resumed.log";
  EXPECT_EQ(losses_by_step(model_dir).rbegin()->first, last + 2);
}

// A second signal does not wait for the step or the checkpoint: the process ends at once.
TEST_F(RobustRun, ASecondSignalExitsAtOnce) {
  const std::string model_dir = dir_ + "/sigint2";
  pid_t child = spawn_attn_train(cli_run(dir_, model_dir, 100000), dir_ + "/sigint2.log");
  ASSERT_TRUE(wait_for_steps(model_dir, child, 2)) << "see " << dir_ << "/sigint2.log";
  kill(child, SIGINT);
  kill(child, SIGTERM);  // another signal number: two of one kind may merge into one while pending
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_TRUE(WEXITSTATUS(status) == 128 + SIGINT || WEXITSTATUS(status) == 128 + SIGTERM) << WEXITSTATUS(status);
  EXPECT_NE(io::read_file(dir_ + "/sigint2.log").find("second signal: stopping now"), std::string::npos);
}

// attn average DIR --out DIR would replace the run's best model: refused unless --force.
TEST_F(RobustRun, AverageDoesNotReplaceAModelSilently) {
  TranslationTrainOptions o = small_run(dir_, dir_ + "/average");
  o.max_steps = 6;
  train_translation(o);
  const std::string before = io::read_file(o.model_dir + "/model.safetensors");
  const std::string cmd = std::string(ATTN_BINARY) + " average " + o.model_dir + " --last 2 --out " + o.model_dir;
  const std::string err = dir_ + "/average.err";
  EXPECT_NE(std::system((cmd + " 2>" + err).c_str()), 0);
  EXPECT_NE(io::read_file(err).find("already holds a model"), std::string::npos) << io::read_file(err);
  EXPECT_NE(io::read_file(err).find("--force"), std::string::npos);
  EXPECT_EQ(io::read_file(o.model_dir + "/model.safetensors"), before) << "untouched";
  EXPECT_EQ(std::system((cmd + " --force 2>" + err).c_str()), 0) << io::read_file(err);
  EXPECT_NE(io::read_file(o.model_dir + "/model.safetensors"), before);
  EXPECT_EQ(std::system((std::string(ATTN_BINARY) + " average " + o.model_dir + " --out " + dir_ + "/avg_elsewhere 2>" + err).c_str()), 0);
}

// Dev pairs longer than the model's positions (issue 50: the run died at its first validation, no
// file named, every step lost) are left out of the dev loss and counted; BLEU still translates
// them in pieces; training pairs that long are skipped whatever data.max_len says; and a
// checkpoint is written before each validation.
TEST_F(RobustRun, LongDevSentencesAreCountedNotFatalAndACheckpointPrecedesValidation) {
  TranslationTrainOptions o = small_run(dir_, dir_ + "/long_dev");
  std::get<TransformerConfig>(o.model).max_len = 64;  // positions: 63 tokens and an eos or bos
  o.max_len = 128;                                    // data.max_len beyond what the positions hold
  const std::vector<std::string> src = data::read_lines(dir_ + "/train.en"), tgt = data::read_lines(dir_ + "/train.de");
  std::string long_src, long_tgt;
  for (int i = 0; i < 20; ++i) long_src += src[i] + " ", long_tgt += tgt[i] + " ";
  {
    std::ofstream es(dir_ + "/long_dev.en"), ds(dir_ + "/long_dev.de");
    int written = 0;  // eight short pairs (a few dozen characters: well under 63 tokens a side)
    for (size_t i = 0; i < src.size() && written < 8; ++i)
      if (src[i].size() < 60 && tgt[i].size() < 60) es << src[i] << "\n", ds << tgt[i] << "\n", ++written;
    es << long_src << "\n", ds << long_tgt << "\n";
    es << src[9] << "\n", ds << long_tgt << "\n";  // a short source with a long reference
  }
  o.valid_src = dir_ + "/long_dev.en";
  o.valid_tgt = dir_ + "/long_dev.de";
  o.valid_sentences = 0;
  o.max_steps = 8;
  o.validate_every = 4;
  o.checkpoint_every = 0;
  o.keep_checkpoints = 0;  // all
  const std::string err = run_capturing_stderr(o);
  EXPECT_NE(err.find("dev: 10 pairs (2 longer than 63 tokens on a side"), std::string::npos) << err;
  EXPECT_NE(err.find("training pairs longer than 63 tokens are skipped"), std::string::npos) << err;
  const auto valid = log_events(o.model_dir, "valid");
  ASSERT_EQ(valid.size(), 2u) << err;
  for (const auto& v : valid) EXPECT_TRUE(std::isfinite(v["dev_nll"].get<double>())) << v.dump();
  EXPECT_TRUE(fs::exists(o.model_dir + "/checkpoints/step-00000004")) << "the checkpoint before step 4's validation";
  EXPECT_TRUE(fs::exists(o.model_dir + "/model.safetensors"));
}

}  // namespace
}  // namespace attn
