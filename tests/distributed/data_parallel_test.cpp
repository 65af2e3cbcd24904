// Data-parallel training under mpirun (docs/distributed.md), through the attn binary: two ranks of
// one thread, each computing half of every global batch, must end with the weights of one process
// that computes the whole global batch itself (train.accumulate 2 for the Transformer; the same
// batch of rows for the classifier), within fp32 rounding; and a rank killed mid-run must end the
// whole job with a message naming it, the last checkpoint intact for a one-process --resume.
// Built only when CMake found MPI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include "attn/models/classifier_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/tensor/random.h"
#include "attn/train/checkpoint.h"
#include "train/train_fixture.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// mpirun as root on a 2-core machine: both allowed explicitly.
const std::string kMpirun = "mpirun --allow-run-as-root --oversubscribe -np 2 ";

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << cmd << "\n" << out;
  return out;
}

// Attention's key bias (the middle third of in_proj_bias) is left out: softmax does not change when
// every score of a row shifts alike, so its exact gradient is zero and what backward computes for it
// is rounding noise, which Adam (dividing by sqrt(v)) turns into steps of about lr whose sign is the
// noise's. It moves nothing else, so it has no bearing on the other weights.
bool is_key_bias(const std::string& name, int64_t j, int64_t n) {
  return name.size() >= 12 && name.compare(name.size() - 12, 12, "in_proj_bias") == 0 && j >= n / 3 && j < 2 * n / 3;
}

// The largest |a - b| over every weight of two parameter lists (same names, same shapes).
double max_abs_diff(const std::vector<std::pair<std::string, Var>>& a, const std::vector<std::pair<std::string, Var>>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    const Tensor x = a[i].second.value().contiguous(), y = b[i].second.value().contiguous();
    EXPECT_EQ(x.numel(), y.numel()) << a[i].first;
    for (int64_t j = 0; j < std::min(x.numel(), y.numel()); ++j)
      if (!is_key_bias(a[i].first, j, x.numel())) d = std::max(d, std::fabs(static_cast<double>(x.data<float>()[j]) - y.data<float>()[j]));
  }
  return d;
}

// The largest |w| over every weight: the scale the difference is measured against.
double max_abs(const std::vector<std::pair<std::string, Var>>& a) {
  double m = 0;
  for (const auto& [k, v] : a) {
    const Tensor x = v.value().contiguous();
    for (int64_t j = 0; j < x.numel(); ++j) m = std::max(m, std::fabs(static_cast<double>(x.data<float>()[j])));
  }
  return m;
}

struct DataParallel : ::testing::Test {
  std::string dir = testing::temp_dir("data_parallel");
  void TearDown() override { fs::remove_all(dir); }

  // A tiny Transformer on the real corpus without dropout (each rank's dropout stream is its own),
// at a modest rate (peak 2.8e-3): Adam's steps magnify any difference, the more the larger the rate.
  std::string translation_args(const std::string& model_dir, int steps) {
    return std::string(ATTN_BINARY) + " train --model-dir " + model_dir + " --max-steps " + std::to_string(steps) +
           " --threads 1 --precision fp32 --set data.train_src=" + dir + "/train.en --set data.train_tgt=" + dir +
           "/train.de --set data.valid_src= --set data.valid_tgt= --set data.tokenizer=" + dir + "/spm.model" +
           " --set model.d_model=32 --set model.heads=2 --set model.encoder_layers=1 --set model.decoder_layers=1" +
           " --set model.d_ff=64 --set model.dropout=0 --set train.max_tokens=256 --set train.accumulate=2" +
           " --set train.warmup=10 --set train.lr_factor=0.05 --set train.decay=none --set train.log_every=10 --set train.checkpoint_every=5" +
           " --set train.checkpoint_minutes=0";
  }
};

TEST_F(DataParallel, TwoRanksEqualOneProcessWithAccumulationTwoTransformer) {
  testing::write_corpus(dir, 400, 200);
  const int steps = 50;
  run(translation_args(dir + "/one", steps));
  const std::string out = run(kMpirun + translation_args(dir + "/two", steps));
  EXPECT_NE(out.find("data-parallel: 2 ranks"), std::string::npos) << out;
  const Seq2Seq one = load_seq2seq(dir + "/one"), two = load_seq2seq(dir + "/two");
  const double d = max_abs_diff(one.parameters(), two.parameters()), scale = max_abs(one.parameters());
  std::printf("Transformer, %d steps: max |w(2 ranks) - w(1 process, accumulate 2)| = %.3g (max |w| %.3g)\n", steps,
              d, scale);
  EXPECT_LE(d, 1e-5 * scale);
  // Only rank 0 wrote: one progress line per logged step.
  EXPECT_EQ(testing::log_events(dir + "/two", "train").size(), static_cast<size_t>(steps / 10));
}

// Every weight equal, bit for bit, key bias included.
bool bit_identical(const std::vector<std::pair<std::string, Var>>& a, const std::vector<std::pair<std::string, Var>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor x = a[i].second.value().contiguous(), y = b[i].second.value().contiguous();
    if (a[i].first != b[i].first || x.numel() != y.numel() ||
        std::memcmp(x.data<float>(), y.data<float>(), static_cast<size_t>(x.numel()) * sizeof(float)) != 0)
      return false;
  }
  return true;
}

// Buckets of 4 KiB (about 30 for the tiny model's 28,104 weights), each started as soon as backward
// finished its gradients, give the same weights as all buckets summed after backward: with two
// ranks every element is the same sum a + b whenever it is taken. The log gives the share of the
// step spent waiting for the sums.
TEST_F(DataParallel, OverlappedBucketsEqualTheSumsAfterBackward) {
  testing::write_corpus(dir, 400, 200);
  const int steps = 20;
  const std::string small = " --set train.allreduce_bucket_kb=4";
  run(kMpirun + translation_args(dir + "/overlap", steps) + small);
  run(kMpirun + translation_args(dir + "/after", steps) + small + " --set train.allreduce_overlap=false");
  run(translation_args(dir + "/one", steps));
  const Seq2Seq overlap = load_seq2seq(dir + "/overlap"), after = load_seq2seq(dir + "/after"), one = load_seq2seq(dir + "/one");
  EXPECT_TRUE(bit_identical(overlap.parameters(), after.parameters()));
  EXPECT_LE(max_abs_diff(one.parameters(), overlap.parameters()), 1e-5 * max_abs(one.parameters()));
  for (const auto& j : testing::log_events(dir + "/overlap", "train")) {
    ASSERT_TRUE(j.contains("comm_fraction")) << j.dump();
    EXPECT_GE(j["comm_fraction"].get<double>(), 0.0);
    EXPECT_LE(j["comm_fraction"].get<double>(), 1.0);
  }
}

// The newest checkpoint's state.json.
nlohmann::json newest_state(const std::string& model_dir) {
  std::ifstream in(latest_checkpoint(model_dir) + "/state.json");
  return nlohmann::json::parse(in);
}

// The share of weights (key bias aside) farther apart than `tolerance`.
double share_apart(const std::vector<std::pair<std::string, Var>>& a, const std::vector<std::pair<std::string, Var>>& b,
                   double tolerance) {
  int64_t apart = 0, all = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor x = a[i].second.value().contiguous(), y = b[i].second.value().contiguous();
    for (int64_t j = 0; j < x.numel(); ++j) {
      if (is_key_bias(a[i].first, j, x.numel())) continue;
      all += 1;
      apart += std::fabs(static_cast<double>(x.data<float>()[j]) - y.data<float>()[j]) > tolerance;
    }
  }
  return static_cast<double>(apart) / static_cast<double>(std::max<int64_t>(all, 1));
}

// A run stopped after 20 steps and resumed with another number of processes to 40 trains on the
// same global batches as a straight run of 40 steps in one process (accumulation 2): the data
// position (epoch, batch in epoch, the order's fingerprint) and the target tokens seen are equal,
// every step's loss agrees to fp32 rounding (another batch would move it by far more), and the
// weights agree to fp32 rounding but for the odd weight whose gradient is itself rounding noise
// (a unit ReLU has all but switched off): Adam divides that noise by its own size, as it does the
// key bias's, and makes steps of about lr of it. 1 -> 2 and 2 -> 1.
TEST_F(DataParallel, ResumesWithAnotherNumberOfRanks) {
  testing::write_corpus(dir, 400, 200);
  const std::string every_step = " --set train.log_every=1";
  run(translation_args(dir + "/straight", 40) + every_step);
  const std::vector<double> straight_losses = testing::logged_losses(dir + "/straight");
  struct Leg { std::string name, first, second; };
  for (const Leg& leg : {Leg{"1 -> 2 processes", "", kMpirun}, Leg{"2 -> 1 processes", kMpirun, ""}}) {
    const std::string model_dir = dir + "/" + (leg.first.empty() ? "up" : "down");
    run(leg.first + translation_args(model_dir, 20) + every_step);
    const std::string out = run(leg.second + translation_args(model_dir, 40) + every_step + " --resume");
    EXPECT_NE(out.find("step-00000020"), std::string::npos) << out;
    const nlohmann::json a = newest_state(dir + "/straight"), b = newest_state(model_dir);
    EXPECT_EQ(b["step"], 40) << leg.name;
    EXPECT_EQ(a["batcher"], b["batcher"]) << leg.name << ": the data position differs";
    EXPECT_EQ(a["tokens_seen"], b["tokens_seen"]) << leg.name << ": another global batch";
    const std::vector<double> losses = testing::logged_losses(model_dir);
    ASSERT_EQ(losses.size(), straight_losses.size()) << leg.name;
    double loss_diff = 0;
    for (size_t i = 0; i < losses.size(); ++i) loss_diff = std::max(loss_diff, std::fabs(losses[i] - straight_losses[i]));
    const Seq2Seq straight = load_seq2seq(dir + "/straight"), resumed = load_seq2seq(model_dir);
    const double scale = max_abs(straight.parameters()), d = max_abs_diff(straight.parameters(), resumed.parameters());
    const double apart = share_apart(straight.parameters(), resumed.parameters(), 1e-5 * scale);
    std::printf("%s: data position %s, %lld target tokens as the straight run; max |loss - loss(straight)| over 40 "
                "steps %.3g; max |w - w(straight)| = %.3g, %.3g%% of the weights farther apart than 1e-5 max |w|\n",
                leg.name.c_str(), b["batcher"].dump().c_str(), static_cast<long long>(b["tokens_seen"].get<int64_t>()),
                loss_diff, d, 100 * apart);
    EXPECT_LE(loss_diff, 1e-5) << leg.name;
    EXPECT_LE(apart, 0.005) << leg.name;
    EXPECT_LE(d, 1e-3 * scale) << leg.name;
  }
}

// Class "a" texts draw from one alphabet, "b" from another.
void write_set(const std::string& path, int n, uint64_t seed) {
  const char* a[] = {"山", "水", "风", "的"};
  const char* b[] = {"河", "月", "花", "的"};
  Rng rng(seed);
  std::ofstream f(path);
  for (int i = 0; i < n; ++i) {
    f << (i % 2 ? "a" : "b") << "\t";
    for (int j = 0, len = 3 + static_cast<int>(rng.below(5)); j < len; ++j) f << (i % 2 ? a : b)[rng.below(4)];
    f << "\n";
  }
}

TEST_F(DataParallel, TwoRanksEqualOneProcessClassifier) {
  write_set(dir + "/train.tsv", 200, 1);
  const int steps = 50;
  auto args = [&](const std::string& model_dir) {
    return std::string(ATTN_BINARY) + " train --set task=classification --model-dir " + model_dir +
           " --max-steps " + std::to_string(steps) + " --threads 1 --precision fp32 --set data.train=" + dir +
           "/train.tsv --set data.dev= --set model.pad_size=8 --set model.d_model=16 --set model.heads=2" +
           " --set model.layers=1 --set model.d_ff=32 --set model.dropout=0 --set train.batch=16" +
           " --set train.lr=0.0005 --set train.max_epochs=0";
  };
  run(args(dir + "/one"));
  run(kMpirun + args(dir + "/two"));
  const ClassifierModel one = load_classifier(dir + "/one"), two = load_classifier(dir + "/two");
  const double d = max_abs_diff(one.model.parameters(), two.model.parameters()),
               scale = max_abs(one.model.parameters());
  std::printf("classifier, %d steps: max |w(2 ranks, 8 rows each) - w(1 process, 16 rows)| = %.3g (max |w| %.3g)\n",
              steps, d, scale);
  EXPECT_LE(d, 1e-5 * scale);
}


// The pid of mpirun's child that is rank `rank` (its OMPI_COMM_WORLD_RANK), or 0.
pid_t rank_pid(pid_t mpirun, int rank) {
  std::ifstream children("/proc/" + std::to_string(mpirun) + "/task/" + std::to_string(mpirun) + "/children");
  const std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (pid_t child; children >> child;) {
    std::ifstream env("/proc/" + std::to_string(child) + "/environ");
    for (std::string var; std::getline(env, var, '\0');)
      if (var == want) return child;
  }
  return 0;
}

TEST_F(DataParallel, AKilledRankEndsTheJobAndOneProcessResumes) {
  testing::write_corpus(dir, 400, 200);
  const std::string model_dir = dir + "/run", log = dir + "/mpirun.log";
  std::istringstream words(translation_args(model_dir, 1000000));  // far more steps than the test waits for
  std::vector<std::string> args{"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2"};
  for (std::string w; words >> w;) args.push_back(w);
  const pid_t mpirun = fork();
  if (mpirun == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    (void)out;
    dup2(fileno(stdout), 2);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp("mpirun", argv.data());
    _exit(127);
  }
  // Wait for two checkpoints, then kill rank 1 as the OOM killer would.
  const auto start = std::chrono::steady_clock::now();
  while (list_checkpoints(model_dir).size() < 2 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(list_checkpoints(model_dir).size(), 2u) << "no checkpoints within 60 s";
  const pid_t victim = rank_pid(mpirun, 1);
  ASSERT_GT(victim, 0) << "rank 1 not found among mpirun's children";
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(mpirun, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() - killed < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  if (done == 0) {  // still running after 60 s: fail, and do not leave it behind
    kill(mpirun, SIGKILL);
    waitpid(mpirun, &status, 0);
  }
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("rank 1 killed: the job ended after %.1f s, exit status %d\n", seconds,
              WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
  ASSERT_EQ(done, mpirun) << "the job did not end within 60 s of rank 1's death\n" << text;
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("rank 1"), std::string::npos) << "no message naming rank 1:\n" << text;
  // The newest checkpoint is whole: one process resumes from it and trains 5 more steps.
  const std::string newest = latest_checkpoint(model_dir);
  const int64_t step = std::stoll(fs::path(newest).filename().string().substr(fs::path(newest).filename().string().find_first_of("0123456789")));
  const std::string out = run(translation_args(model_dir, static_cast<int>(step) + 5) + " --resume");
  EXPECT_NE(out.find("resumed from"), std::string::npos) << out;
  EXPECT_NE(out.find("done: " + std::to_string(step + 5) + " steps"), std::string::npos) << out;
}

}  // namespace
}  // namespace attn
