// The shared training loop (include/attn/train/loop.h).
#include "attn/train/loop.h"

#include <algorithm>
#include <cstdio>

#include "attn/error.h"
#include "attn/train/checkpoint.h"
#include "attn/train/curves.h"
#include "attn/train/stop_signal.h"

namespace attn {

StepSums& StepSums::operator+=(const StepSums& s) {
  loss_sum += s.loss_sum;
  loss_weight += s.loss_weight;
  items += s.items;
  correct += s.correct;
  comm_seconds += s.comm_seconds;
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
  if (o.comm.distributed()) {  // the time waiting for the gradients' sums, of the steps' time
    record["allreduce_wait_s"] = window.comm_seconds;
    record["comm_fraction"] = window.comm_seconds / std::max(window_seconds, 1e-9);
    char comm[48];
    std::snprintf(comm, sizeof comm, "  comm %.0f%%", 100.0 * window.comm_seconds / std::max(window_seconds, 1e-9));
    words += comm;
  }
  record["elapsed"] = now;
  record["eta"] = eta;
  char head[64];
  std::snprintf(head, sizeof head, "step %6lld  epoch %lld  ", static_cast<long long>(clock.step),
                static_cast<long long>(epoch + 1));
  log.write(record, head + words + "  " + format_duration(now) + " elapsed  ETA " + format_duration(eta));
}

// A step whose loss or gradient was not finite: reported in the log; the run ends with an error
// when max_bad_steps come in a row, before any checkpoint of the bad state could be written.
void report_bad_step(const LoopOptions& o, const LoopClock& clock, ProgressLog& log, int64_t in_row) {
  const int64_t step = clock.step + 1;  // the step that was attempted
  if (o.comm.leader())
    log.write({{"event", "skipped"}, {"step", step}, {"elapsed", clock.elapsed()}, {"in_row", in_row}},
              "step " + std::to_string(step) + ": the loss or gradient is NaN or infinite; skipped, no update (" +
                  std::to_string(in_row) + " in a row of train.max_bad_steps " + std::to_string(o.max_bad_steps) + ")");
  if (in_row < o.max_bad_steps) return;
  if (o.comm.leader()) write_training_curves(o.model_dir);
  const std::string newest = latest_checkpoint(o.model_dir);
  fail("train: the loss or gradient was NaN or infinite in ", in_row, " steps in a row (train.max_bad_steps ",
       o.max_bad_steps, ") after step ", clock.step, "; stopped. ",
       newest.empty() ? std::string("No checkpoint was written yet.")
                      : "The newest checkpoint, " + newest + ", holds the last good state (--resume continues from it; "
                        "a lower train.lr or train.clip_norm may help).");
}

void write_checkpoint(const LoopOptions& o, const LoopClock& clock, const Adam& adam, TrainingTask& task) {
  save_checkpoint(o.model_dir, clock.step, adam, task.state(), o.keep_checkpoints,
                  task.ema ? task.ema() : std::map<std::string, Tensor>{});
}

// The loop's state from one step to the next.
struct LoopState {
  int64_t start_step = 0, validated_at = -1, bad_in_row = 0;
  double start_elapsed = 0, last_checkpoint = 0, window_start = 0;
  StepSums window;
};

// After a good step: progress line, validation, checkpoint. Returns true when the run is over.
bool after_step(const LoopOptions& o, LoopClock& clock, Adam& adam, TrainingTask& task, ProgressLog& log,
                LoopState& st, int64_t epoch_before, bool interrupted) {
  const bool epoch_done = task.epoch() != epoch_before;
  const double max_seconds = o.max_minutes * 60.0;
  const bool budget = o.comm.agree(budget_spent(clock.step, clock.elapsed(), task.epoch(), o.max_steps, max_seconds,
                                                o.max_epochs));
  if (!o.comm.leader()) return o.comm.agree(false) || budget || interrupted;  // rank 0's early stop
  if (clock.step % o.log_every == 0 || budget || interrupted) {
    log_progress(o, clock, task, log, st.window, clock.elapsed() - st.window_start, epoch_before, st.start_step,
                 st.start_elapsed);
    st.window = {};
    st.window_start = clock.elapsed();
  }
  bool stop = false;
  const bool by_steps = o.validate_every > 0 && clock.step % o.validate_every == 0;
  const bool scheduled = by_steps || (o.validate_each_epoch && (epoch_done || budget));
  // A checkpoint before every validation (the scheduled one, or the budget's last): whatever the
  // validation does, no step is lost.
  if (task.validate && !interrupted && (scheduled || budget)) {
    write_checkpoint(o, clock, adam, task);
    st.last_checkpoint = clock.elapsed();
  }
  if (task.validate && !interrupted && scheduled) {
    stop = task.validate(log);
    st.validated_at = clock.step;
  }
  if (task.validate && !interrupted && st.validated_at != clock.step && (budget || stop)) {
    stop = task.validate(log) || stop;
    st.validated_at = clock.step;
  }
  const bool checkpoint = (o.checkpoint_every > 0 && clock.step % o.checkpoint_every == 0) ||
                          (o.checkpoint_minutes > 0 && clock.elapsed() - st.last_checkpoint >= o.checkpoint_minutes * 60.0) ||
                          (o.checkpoint_each_epoch && epoch_done);
  if (checkpoint || budget || stop || interrupted) {
    write_checkpoint(o, clock, adam, task);
    st.last_checkpoint = clock.elapsed();
  }
  return o.comm.agree(stop) || budget || interrupted;
}

}  // namespace

LoopEnd run_training_loop(const LoopOptions& o, LoopClock& clock, Adam& adam, TrainingTask& task) {
  const bool leader = o.comm.leader();
  ProgressLog log(leader ? o.model_dir + "/train_log.jsonl" : "");
  LoopState st;
  st.start_step = clock.step;
  st.start_elapsed = clock.elapsed_before;
  st.last_checkpoint = st.window_start = clock.elapsed();
  // A resumed run whose budget is already spent trains no further step.
  bool stop = o.comm.agree(
      budget_spent(clock.step, clock.elapsed(), task.epoch(), o.max_steps, o.max_minutes * 60.0, o.max_epochs));
  if (stop && leader)
    std::fprintf(stderr, "the budget is spent already (step %lld): nothing to train\n",
                 static_cast<long long>(clock.step));
  bool interrupted = false;
  while (!stop) {
    const int64_t epoch_before = task.epoch();  // the epoch this step trains in
    const StepSums s = task.step();
    interrupted = o.comm.agree(stop_requested());
    if (s.skipped) {
      report_bad_step(o, clock, log, ++st.bad_in_row);
      if (!interrupted) continue;
      // The weights are those of the last good step; the data position is past the skipped batches.
      if (leader) write_checkpoint(o, clock, adam, task);
      break;
    }
    st.bad_in_row = 0;
    st.window += s;
    stop = after_step(o, clock, adam, task, log, st, epoch_before, interrupted);
  }
  if (!leader) return interrupted ? LoopEnd::interrupted : LoopEnd::finished;
  if (interrupted)
    std::fprintf(stderr, "interrupted: stopped after step %lld with a checkpoint in %s/checkpoints; "
                 "--resume continues from it\n", static_cast<long long>(clock.step), o.model_dir.c_str());
  else if (task.validate && st.validated_at != clock.step && clock.step > st.start_step)
    task.validate(log);
  write_training_curves(o.model_dir);
  return interrupted ? LoopEnd::interrupted : LoopEnd::finished;
}

}  // namespace attn
