// The shared training loop (include/attn/train/loop.h) on a task of known steps: where it
// validates, checkpoints, logs and stops.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attn/train/checkpoint.h"
#include "attn/train/loop.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

struct Fake {
  LoopClock clock;
  int64_t steps_per_epoch = 4;
  std::vector<int64_t> validated;
  int64_t stop_at_validation = -1;  // the validation (0-based) that asks to stop
  Var w{Tensor::zeros({2}), true};
  Adam adam{{{"w", w}}};

  TrainingTask task() {
    TrainingTask t;
    t.step = [this] {
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
  EXPECT_EQ(list_checkpoints(o.model_dir).size(), 2u) << "steps 5 and 10";
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

}  // namespace
}  // namespace attn
