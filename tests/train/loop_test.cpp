// The shared training loop (include/attn/train/loop.h) on a task of known steps: where it
// validates, checkpoints, logs and stops.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attn/train/checkpoint.h"
#include "attn/error.h"
#include "attn/train/loop.h"
#include "attn/train/stop_signal.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

struct Fake {
  LoopClock clock;
  int64_t steps_per_epoch = 4;
  std::vector<int64_t> validated;
  int64_t stop_at_validation = -1;  // the validation (0-based) that asks to stop
  int64_t calls = 0;                 // step() calls, skipped ones included
  std::vector<int64_t> bad_calls;    // the calls (1-based) whose loss is NaN
  int64_t stop_at_call = -1;         // the call during which a stop is requested (a signal)
  Var w{Tensor::zeros({2}), true};
  Adam adam{{{"w", w}}};

  TrainingTask task() {
    TrainingTask t;
    t.step = [this] {
      calls += 1;
      if (calls == stop_at_call) request_stop();
      if (std::find(bad_calls.begin(), bad_calls.end(), calls) != bad_calls.end())
        return StepSums{NAN, 1, 10, 0, true};  // as a trainer reports it: no update, the step not counted
      clock.step += 1;
      return StepSums{2.0, 1, 10, 0};
    };
    t.epoch = [this] { return clock.step / steps_per_epoch; };
    t.validate = [this](ProgressLog&) {
      validated.push_back(clock.step);
      return static_cast<int64_t>(validated.size()) - 1 == stop_at_validation;
    };
    t.state = [] { return nlohmann::json::object(); };
    t.progress = [](const StepSums& s, double) {
      return std::make_pair(nlohmann::json{{"loss", s.loss_sum / s.loss_weight}}, std::string("loss"));
    };
    return t;
  }
};

std::string fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attn_loop_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

int64_t progress_lines(const std::string& dir) {
  std::ifstream in(dir + "/train_log.jsonl");
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find("\"train\"") != std::string::npos;
  return n;
}

TEST(TrainingLoop, StepBudgetValidationsAndCheckpointsByStep) {
  Fake f;
  LoopOptions o;
  o.model_dir = fresh_dir("steps");
  o.max_steps = 10;
  o.log_every = 3;
  o.validate_every = 4;
  o.checkpoint_every = 5;
  o.keep_checkpoints = 0;
  TrainingTask t = f.task();
  run_training_loop(o, f.clock, f.adam, t);
  EXPECT_EQ(f.clock.step, 10);
  EXPECT_EQ(f.validated, (std::vector<int64_t>{4, 8, 10})) << "by steps, then the last step";
  std::vector<std::string> names;
  for (const std::string& c : list_checkpoints(o.model_dir)) names.push_back(fs::path(c).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"step-00000004", "step-00000005", "step-00000008", "step-00000010"}))
      << "by steps (5, 10), and before each validation (4, 8, 10)";
  EXPECT_EQ(progress_lines(o.model_dir), 4) << "steps 3, 6, 9 and the budget's end";
  fs::remove_all(o.model_dir);
}

TEST(TrainingLoop, EpochsEarlyStopAndResumeWithTheBudgetSpent) {
  Fake f;
  LoopOptions o;
  o.model_dir = fresh_dir("epochs");
  o.max_epochs = 5;
  o.log_every = 100;
  o.validate_each_epoch = true;
  o.checkpoint_each_epoch = true;
  o.keep_checkpoints = 0;
  o.batches_per_epoch = 4;
  f.stop_at_validation = 2;  // the third epoch's validation stops the run
  TrainingTask t = f.task();
  run_training_loop(o, f.clock, f.adam, t);
  EXPECT_EQ(f.clock.step, 12);
  EXPECT_EQ(f.validated, (std::vector<int64_t>{4, 8, 12}));
  EXPECT_EQ(list_checkpoints(o.model_dir).size(), 3u);
  // Resumed at step 20 of a 5-epoch budget: nothing more to train, validate or save.
  Fake g;
  g.clock.step = 20;
  TrainingTask u = g.task();
  run_training_loop(o, g.clock, g.adam, u);
  EXPECT_EQ(g.clock.step, 20);
  EXPECT_TRUE(g.validated.empty());
  EXPECT_EQ(list_checkpoints(o.model_dir).size(), 3u);
  fs::remove_all(o.model_dir);
}

int64_t log_events(const std::string& dir, const std::string& event) {
  std::ifstream in(dir + "/train_log.jsonl");
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find("\"" + event + "\"") != std::string::npos;
  return n;
}

// A stop request (the first SIGINT or SIGTERM) during step 7: the step ends, a checkpoint of step 7
// is written, nothing is validated, and the loop says it was interrupted.
TEST(TrainingLoop, StopRequestEndsAfterTheStepWithACheckpoint) {
  Fake f;
  f.stop_at_call = 7;
  LoopOptions o;
  o.model_dir = fresh_dir("stop");
  o.max_steps = 100;
  o.log_every = 50;
  o.validate_every = 5;
  o.checkpoint_every = 50;
  o.keep_checkpoints = 0;
  TrainingTask t = f.task();
  const LoopEnd end = run_training_loop(o, f.clock, f.adam, t);
  clear_stop();
  EXPECT_EQ(end, LoopEnd::interrupted);
  EXPECT_EQ(f.clock.step, 7);
  EXPECT_EQ(f.validated, (std::vector<int64_t>{5})) << "no validation after the stop";
  auto all = list_checkpoints(o.model_dir);
  ASSERT_EQ(all.size(), 2u) << "the one before step 5's validation, and the interrupted step's";
  EXPECT_EQ(fs::path(all.front()).filename(), "step-00000005");
  EXPECT_EQ(fs::path(all.back()).filename(), "step-00000007");
  EXPECT_EQ(progress_lines(o.model_dir), 1) << "the interrupted step's progress line";
  EXPECT_TRUE(fs::exists(o.model_dir + "/curves.svg"));
  fs::remove_all(o.model_dir);
}

// NaN steps are skipped (not counted) and logged; fewer than max_bad_steps in a row let the run
// reach its budget.
TEST(TrainingLoop, BadStepsAreSkippedAndReported) {
  Fake f;
  f.bad_calls = {3, 4, 9};
  LoopOptions o;
  o.model_dir = fresh_dir("bad_steps");
  o.max_steps = 10;
  o.log_every = 1;
  o.max_bad_steps = 3;
  o.keep_checkpoints = 0;
  TrainingTask t = f.task();
  EXPECT_EQ(run_training_loop(o, f.clock, f.adam, t), LoopEnd::finished);
  EXPECT_EQ(f.clock.step, 10);
  EXPECT_EQ(f.calls, 13);
  EXPECT_EQ(log_events(o.model_dir, "skipped"), 3);
  EXPECT_EQ(progress_lines(o.model_dir), 10);
  fs::remove_all(o.model_dir);
}

// max_bad_steps NaN steps in a row stop the run with an error naming the setting and the last
// good checkpoint, which stays the newest.
TEST(TrainingLoop, BadStepsInARowStopTheRunWithTheLastGoodCheckpoint) {
  Fake f;
  f.bad_calls = {8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  LoopOptions o;
  o.model_dir = fresh_dir("bad_run");
  o.max_steps = 20;
  o.checkpoint_every = 5;
  o.max_bad_steps = 4;
  o.keep_checkpoints = 0;
  TrainingTask t = f.task();
  try {
    run_training_loop(o, f.clock, f.adam, t);
    FAIL() << "a run whose loss stays NaN must stop with an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("4 steps in a row"), std::string::npos) << m;
    EXPECT_NE(m.find("train.max_bad_steps"), std::string::npos) << m;
    EXPECT_NE(m.find("step-00000005"), std::string::npos) << m;
  }
  EXPECT_EQ(f.clock.step, 7);
  EXPECT_EQ(f.calls, 11) << "stops at the 4th bad step in a row";
  auto all = list_checkpoints(o.model_dir);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(fs::path(all.back()).filename(), "step-00000005");
  fs::remove_all(o.model_dir);
}

}  // namespace
}  // namespace attn
