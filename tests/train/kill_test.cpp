// kill -9 at random moments (start-up, steps, checkpoint saves, validations), each time followed
// by --resume: the finished run's weights and Adam moments equal those of a run never
// interrupted, bit for bit. ATTN_KILLS sets the number of kills (ctest: 4; scripts/kill_test.sh:
// 20), ATTN_KILL_SEED the moments' random stream.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "attn/io/atomic_file.h"
#include "attn/io/safetensors.h"
#include "attn/train/checkpoint.h"
#include "train/train_fixture.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using namespace attn::testing;

constexpr int64_t kSteps = 40;

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

std::vector<std::string> run_args(const std::string& dir, const std::string& model_dir) {
  return with_sets({"--model-dir", model_dir, "--max-steps", std::to_string(kSteps), "--threads", "1"},
                   {"data.train_src=" + dir + "/train.en", "data.train_tgt=" + dir + "/train.de",
                    "data.valid_src=" + dir + "/dev.en", "data.valid_tgt=" + dir + "/dev.de",
                    "data.tokenizer=" + dir + "/spm.model", "model.d_model=32", "model.d_ff=64", "model.heads=2",
                    "model.encoder_layers=1", "model.decoder_layers=1", "model.dropout=0.1",
                    "train.max_tokens=512", "train.warmup=5", "train.decay=linear", "train.log_every=1",
                    "train.checkpoint_every=2", "train.checkpoint_minutes=0", "train.keep_checkpoints=2",
                    "train.validate_every=4", "train.valid_sentences=16"});
}

// What the run was doing when it was killed, from what it left behind.
std::string moment(const std::string& model_dir, const std::string& log, size_t lines_before) {
  if (fs::exists(model_dir + "/checkpoints"))
    for (const auto& e : fs::directory_iterator(model_dir + "/checkpoints"))
      if (e.path().filename().string().find(".tmp") != std::string::npos) return "save";
  const std::string text = fs::exists(log) ? io::read_file(log) : "";
  const size_t last = text.find_last_of('\n', text.size() > 1 ? text.size() - 2 : 0);
  const std::string line = text.substr(last == std::string::npos ? 0 : last + 1);
  if (!fs::exists(model_dir + "/train_log.jsonl") || log_events(model_dir, "train").size() == lines_before)
    return "start-up";
  if (line.rfind("step ", 0) == 0) {  // the last progress line: validation follows on every 4th step
    const int64_t step = std::atoll(line.c_str() + 5);
    if (step % 4 == 0) return "validation";
  }
  return "step";
}

void expect_same_tensors(const std::string& a, const std::string& b) {
  auto x = io::load_safetensors(a), y = io::load_safetensors(b);
  ASSERT_EQ(x.size(), y.size()) << a;
  for (const auto& [name, t] : x) {
    ASSERT_TRUE(y.count(name)) << name;
    const Tensor& u = y.at(name);
    ASSERT_EQ(t.numel(), u.numel()) << name;
    EXPECT_EQ(std::memcmp(t.data<float>(), u.data<float>(), sizeof(float) * t.numel()), 0) << b << ": " << name;
  }
}

TEST(KillTest, RunKilledAtRandomMomentsEndsWithTheSameWeightsBitForBit) {
  const int64_t kills = env_int("ATTN_KILLS", 4), seed = env_int("ATTN_KILL_SEED", 2026);
  const std::string dir = temp_dir("kill_test");
  write_corpus(dir, 400, 300);
  head(dir + "/train.en", dir, "dev.en", 16);
  head(dir + "/train.de", dir, "dev.de", 16);
  int status = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  pid_t straight = spawn_attn_train(run_args(dir, dir + "/straight"), dir + "/straight.log");
  double startup = 0;  // until the first step is logged: every resumed attempt pays it again
  while (waitpid(straight, &status, WNOHANG) == 0) {
    if (startup == 0 && !log_events(dir + "/straight", "train").empty()) startup = since();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(status, 0) << "see " << dir << "/straight.log";
  const double seconds = since();

  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  std::map<std::string, int> where;
  const std::string model_dir = dir + "/killed";
  int64_t landed = 0, attempts = 0;
  while (landed < kills && attempts < 4 * kills) {
    ++attempts;
    std::vector<std::string> args = run_args(dir, model_dir);
    if (attempts > 1) args.push_back("--resume");
    const size_t lines_before = fs::exists(model_dir + "/train_log.jsonl") ? log_events(model_dir, "train").size() : 0;
    const std::string log = dir + "/attempt" + std::to_string(attempts) + ".log";
    pid_t child = spawn_attn_train(args, log);
    // From late in start-up to 1.5/kills of the training time past it: the kills spread over the run.
    std::uniform_real_distribution<double> delay(0.7 * startup, startup + 1.5 * (seconds - startup) / static_cast<double>(kills));
    std::this_thread::sleep_for(std::chrono::duration<double>(delay(rng)));
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    if (!WIFSIGNALED(status)) {  // it had finished: the kill missed
      ASSERT_EQ(status, 0) << "see " << log;
      break;
    }
    ++landed;
    ++where[moment(model_dir, log, lines_before)];
  }
  std::vector<std::string> args = run_args(dir, model_dir);
  args.push_back("--resume");
  pid_t last = spawn_attn_train(args, dir + "/final.log");
  waitpid(last, &status, 0);
  ASSERT_EQ(status, 0) << "see " << dir << "/final.log";
  std::printf("[kill -9] %lld kills landed in %lld attempts (seed %lld; a whole run takes %.2f s, %.2f s of start-up):",
              static_cast<long long>(landed), static_cast<long long>(attempts), static_cast<long long>(seed), seconds, startup);
  for (const auto& [what, n] : where) std::printf(" %s %d", what.c_str(), n);
  std::printf("\n");
  EXPECT_GE(landed, std::min<int64_t>(kills, 3)) << "the kills must land before the run ends";
  const std::string a = dir + "/straight/checkpoints/step-00000040", b = model_dir + "/checkpoints/step-00000040";
  expect_same_tensors(a + "/model.safetensors", b + "/model.safetensors");
  expect_same_tensors(a + "/optimizer.safetensors", b + "/optimizer.safetensors");
  auto x = losses_by_step(dir + "/straight"), y = losses_by_step(model_dir);
  ASSERT_EQ(y.size(), static_cast<size_t>(kSteps));
  for (const auto& [step, loss] : x) EXPECT_EQ(loss, y[step]) << "step " << step;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
