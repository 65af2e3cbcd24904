// The training loop every task shares (translation, classification): the budget (steps, epochs,
// minutes on the wall or CPU clock), progress lines with ETA, validation, checkpoints, resume's
// starting point and early stopping. A task supplies its step, its validation (with its metric and
// its rule for stopping early), the state its checkpoints carry, and the words of its progress
// lines.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "attn/train/adam.h"
#include "attn/train/checkpoint.h"
#include "attn/train/distributed.h"
#include "attn/train/progress.h"

namespace attn {

struct LoopOptions {
  std::string model_dir;  // checkpoints/ and train_log.jsonl go here
  int64_t max_steps = 0, max_epochs = 0;  // budgets (0 = none); the first reached ends the run
  double max_minutes = 0.0;
  int64_t log_every = 50;          // steps between progress lines (and one when the budget ends)
  int64_t validate_every = 0;      // steps between validations (0: none by steps)
  bool validate_each_epoch = false;
  int64_t checkpoint_every = 0;    // steps between checkpoints (0: none by steps)
  double checkpoint_minutes = 0.0; // minutes between checkpoints (0: none by time)
  bool checkpoint_each_epoch = false;
  int keep_checkpoints = kKeepCheckpoints;
  // Steps whose loss (or gradient) is NaN or infinite are skipped without an update; this many in
  // a row end the run with an error, the checkpoints of the good steps untouched.
  int64_t max_bad_steps = 5;
  // The batches of an epoch and of a step, for the ETA of an epoch budget.
  int64_t batches_per_epoch = 0, batches_per_step = 1;
  // The ranks of a data-parallel run (train/distributed.h): rank 0 alone logs, validates and writes
  // checkpoints; the decisions to stop (budget, early stop, a signal) are rank 0's on every rank.
  Communicator comm;
};

// The cadence every task's options spell alike (TranslationTrainOptions, ClassificationTrainOptions).
template <class TaskOptions>
LoopOptions common_loop_options(const TaskOptions& o) {
  LoopOptions lo;
  lo.model_dir = o.model_dir;
  lo.max_steps = o.max_steps;
  lo.max_epochs = o.max_epochs;
  lo.max_minutes = o.max_minutes;
  lo.log_every = o.log_every;
  lo.validate_every = o.validate_every;
  lo.checkpoint_every = o.checkpoint_every;
  lo.keep_checkpoints = o.keep_checkpoints;
  lo.max_bad_steps = o.max_bad_steps;
  lo.comm = o.comm;
  return lo;
}

// Sums over one or more steps, which a task's progress line turns into its figures.
struct StepSums {
  double loss_sum = 0;      // the loss times its weight (target tokens, or 1 per batch), summed
  int64_t loss_weight = 0;
  int64_t items = 0;        // target tokens, or samples
  int64_t correct = 0;      // samples predicted right (classification)
  bool skipped = false;     // the loss or gradient was not finite: no update, the step not counted
  double comm_seconds = 0;  // waiting for the ranks' sums (data-parallel; the part backward did not hide)
  StepSums& operator+=(const StepSums& s);
};

// Where the run stands: the step count and the clock, both carried across a resume.
struct LoopClock {
  int64_t step = 0;
  double elapsed_before = 0;  // seconds of earlier runs (resume)
  Stopwatch watch;
  double elapsed() const { return elapsed_before + watch.seconds(); }
};

struct TrainingTask {
  // One optimizer step (it advances the clock's step), or a skipped one (StepSums::skipped: the
  // batches are consumed, nothing is updated, the clock's step stays).
  std::function<StepSums()> step;
  std::function<int64_t()> epoch;  // the epoch the next step trains in (0 = the first)
  // Validates, logs and saves the best model; true: stop early. Empty: no dev set.
  std::function<bool(ProgressLog&)> validate;
  std::function<nlohmann::json()> state;  // what a checkpoint keeps beside the step and Adam
  // The weights' moving average a checkpoint keeps (train/ema.h); empty function: none.
  std::function<std::map<std::string, Tensor>()> ema;
  // A progress line's task figures (JSON fields, text) over `sums` and `seconds`.
  std::function<std::pair<nlohmann::json, std::string>(const StepSums& sums, double seconds)> progress;
};

// How a run ended: its budget spent or stopped early (finished), or asked to stop by a signal
// (stop_signal.h) after a step, with a checkpoint of that step written (interrupted).
enum class LoopEnd { finished, interrupted };

// Trains until a budget is spent, the task stops early or a stop is requested, writing progress,
// validations and checkpoints. A checkpoint is written before every validation (whatever the
// validation does, no step is lost) and, when one is due, again after it, so that the step's
// checkpoint holds the best-so-far of its step. When the last step was not validated, it is
// validated at the end (not after an interruption, which should end quickly). At the end the
// run's curves (train/curves.h) are written to model_dir/curves.svg.
LoopEnd run_training_loop(const LoopOptions& o, LoopClock& clock, Adam& adam, TrainingTask& task);

}  // namespace attn
