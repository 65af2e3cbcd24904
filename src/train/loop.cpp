// The shared training loop (include/attn/train/loop.h).
#include "attn/train/loop.h"

#include <algorithm>
#include <cstdio>

#include "attn/train/checkpoint.h"

namespace attn {

StepSums& StepSums::operator+=(const StepSums& s) {
  loss_sum += s.loss_sum;
  loss_weight += s.loss_weight;
  items += s.items;
  correct += s.correct;
  return *this;
}

namespace {

// The progress line of the steps since the last one.
void log_progress(const LoopOptions& o, const LoopClock& clock, TrainingTask& task, ProgressLog& log,
                  const StepSums& window, double window_seconds, int64_t epoch, int64_t start_step,
                  double start_elapsed) {
  const double now = clock.elapsed();
  const int64_t step_budget = eta_step_budget(o.max_steps, o.max_epochs, o.batches_per_epoch, o.batches_per_step);
  const double eta = eta_seconds(now, clock.step, start_step, start_elapsed, step_budget, o.max_minutes * 60.0);
  auto [fields, words] = task.progress(window, std::max(window_seconds, 1e-9));
  nlohmann::json record = {{"event", "train"}, {"step", clock.step}, {"epoch", epoch + 1}};
  record.update(fields);
  record["elapsed"] = now;
  record["eta"] = eta;
  char head[64];
  std::snprintf(head, sizeof head, "step %6lld  epoch %lld  ", static_cast<long long>(clock.step),
                static_cast<long long>(epoch + 1));
  log.write(record, head + words + "  " + format_duration(now) + " elapsed  ETA " + format_duration(eta));
}

}  // namespace

void run_training_loop(const LoopOptions& o, LoopClock& clock, Adam& adam, TrainingTask& task) {
  ProgressLog log(o.model_dir + "/train_log.jsonl");
  const int64_t start_step = clock.step;
  const double start_elapsed = clock.elapsed_before, max_seconds = o.max_minutes * 60.0;
  double last_checkpoint = clock.elapsed(), window_start = clock.elapsed();
  int64_t validated_at = -1;
  StepSums window;
  // A resumed run whose budget is already spent trains no further step.
  bool stop = budget_spent(clock.step, clock.elapsed(), task.epoch(), o.max_steps, max_seconds, o.max_epochs);
  if (stop)
    std::fprintf(stderr, "the budget is spent already (step %lld): nothing to train\n",
                 static_cast<long long>(clock.step));
  while (!stop) {
    const int64_t epoch_before = task.epoch();  // the epoch this step trains in
    window += task.step();
    const bool epoch_done = task.epoch() != epoch_before;
    const bool budget = budget_spent(clock.step, clock.elapsed(), task.epoch(), o.max_steps, max_seconds, o.max_epochs);
    if (clock.step % o.log_every == 0 || budget) {
      log_progress(o, clock, task, log, window, clock.elapsed() - window_start, epoch_before, start_step,
                   start_elapsed);
      window = {};
      window_start = clock.elapsed();
    }
    const bool by_steps = o.validate_every > 0 && clock.step % o.validate_every == 0;
    if (task.validate && (by_steps || (o.validate_each_epoch && (epoch_done || budget)))) {
      stop = task.validate(log);
      validated_at = clock.step;
    }
    if (task.validate && validated_at != clock.step && (budget || stop)) {
      stop = task.validate(log) || stop;
      validated_at = clock.step;
    }
    const bool checkpoint = (o.checkpoint_every > 0 && clock.step % o.checkpoint_every == 0) ||
                            (o.checkpoint_minutes > 0 && clock.elapsed() - last_checkpoint >= o.checkpoint_minutes * 60.0) ||
                            (o.checkpoint_each_epoch && epoch_done);
    if (checkpoint || budget || stop) {
      save_checkpoint(o.model_dir, clock.step, adam, task.state(), o.keep_checkpoints);
      last_checkpoint = clock.elapsed();
    }
    stop = stop || budget;
  }
  if (task.validate && validated_at != clock.step && clock.step > start_step) task.validate(log);
}

}  // namespace attn
