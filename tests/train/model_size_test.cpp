// model.size auto in the trainer: the first steps measure the reference size's rate, the rule picks
// the size for the budget left, the model directory holds that size, a resume keeps it, and the
// measuring steps respect a step budget.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attn/models/model_dir.h"
#include "attn/runtime.h"
#include "attn/train/model_size.h"
#include "attn/train/translation_trainer.h"
#include "train/train_fixture.h"

namespace attn {
namespace {

using namespace attn::testing;

// The recipe's options (the reference size) on the fixture's corpus, choosing the size itself.
TranslationTrainOptions auto_run(const std::string& dir, const std::string& model_dir, double minutes) {
  TranslationTrainOptions o = small_run(dir, model_dir);
  o.model = TranslationTrainOptions{}.model;
  o.schedule = TranslationTrainOptions{}.schedule;
  o.auto_size = true;
  o.max_minutes = minutes;
  o.clock = BudgetClock::cpu;
  o.checkpoint_every = 2;
  return o;
}

int64_t saved_d_model(const std::string& model_dir) {
  return read_json_file(model_dir + "/config.json").at("d_model").get<int64_t>();
}

// A budget of 6 CPU seconds holds far fewer reference steps than the smallest band's bound on any
// CPU, so the rule picks the smallest size, and the run starts afresh with it. One thread: on a
// loaded machine (the suite runs tests side by side) two threads' waits for each other count as
// CPU time, and once spent the whole budget before the measuring steps were done.
TEST(ModelSizeAuto, PicksTheSizeForTheBudgetAndResumeKeepsIt) {
  const std::string dir = temp_dir("size_auto");
  write_corpus(dir, 300, 200);
  const int threads_before = threads();
  set_threads(1);
  const std::string model_dir = dir + "/run";
  train_translation(auto_run(dir, model_dir, 0.1));
  const std::vector<nlohmann::json> sizes = log_events(model_dir, "size");
  ASSERT_EQ(sizes.size(), 1u);
  const double left = sizes[0]["reference_steps_left"].get<double>();
  const ModelSize& picked = model_sizes().front();
  EXPECT_GT(sizes[0]["reference_steps_per_s"].get<double>(), 0.0);
  EXPECT_LT(left, picked.below_reference_steps);
  EXPECT_EQ(sizes[0]["size"], picked.name);
  EXPECT_EQ(&size_for_budget(left), &picked);
  EXPECT_EQ(saved_d_model(model_dir), picked.d_model) << "the model directory holds the size picked";
  const std::vector<nlohmann::json> steps = log_events(model_dir, "train");
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front()["step"], 1) << "another size starts from its first step";

  TranslationTrainOptions more = auto_run(dir, model_dir, 0.15);
  more.resume = true;
  train_translation(more);  // the reference size asked for again: the picked one is resumed, not refused
  EXPECT_EQ(log_events(model_dir, "size").size(), 1u) << "a resumed run does not choose again";
  EXPECT_EQ(saved_d_model(model_dir), picked.d_model);
  set_threads(threads_before);
}

TEST(ModelSizeAuto, MeasuringStepsKeepToTheStepBudget) {
  const std::string dir = temp_dir("size_steps");
  write_corpus(dir, 300, 200);
  TranslationTrainOptions o = auto_run(dir, dir + "/run", 5.0);
  o.max_steps = 2;
  train_translation(o);
  const std::vector<nlohmann::json> sizes = log_events(dir + "/run", "size");
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_LE(sizes[0]["step"].get<int64_t>(), 2);
  // The measuring steps are not logged one by one; the saved model says where training ended.
  EXPECT_EQ(read_json_file(dir + "/run/config.json").at("training").at("step"), 2);
}

}  // namespace
}  // namespace attn
