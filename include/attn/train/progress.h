// Progress of long work: a line on stderr a person can read (step, epoch, loss, lr, tokens/s,
// elapsed and ETA against the step or time budget) and the same figures as JSON lines in a file
// that tools read.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/budget_clock.h"

namespace attn {

// Seconds as "1h02m", "3m05s", "42s".
std::string format_duration(double seconds);

// CPU time used by this process so far, all threads (seconds): the figure to compare on a loaded machine.
double process_cpu_seconds();

// Seconds since construction on the chosen clock.
class Stopwatch {
 public:
  explicit Stopwatch(BudgetClock clock = BudgetClock::wall);
  double seconds() const;

 private:
  BudgetClock clock_;
  std::chrono::steady_clock::time_point wall_start_;
  double cpu_start_;
};

class ProgressLog {
 public:
  // jsonl_path may be empty (stderr only). Appends when the file exists (a resumed run).
  explicit ProgressLog(const std::string& jsonl_path);
  ~ProgressLog();
  ProgressLog(const ProgressLog&) = delete;
  ProgressLog& operator=(const ProgressLog&) = delete;

  // Writes `record` as one JSON line and `line` to stderr.
  void write(const nlohmann::json& record, const std::string& line);

 private:
  std::FILE* file_ = nullptr;
};

// Whether any budget (0 = none) is reached: steps done, seconds elapsed, epochs completed.
bool budget_spent(int64_t step, double elapsed, int64_t epochs_done, int64_t max_steps, double max_seconds,
                  int64_t max_epochs);

// The step budget an ETA counts down: max_steps, or the steps max_epochs take (batches_per_epoch
// batches, batches_per_step of them a step), whichever is nearer; 0 when neither is set.
int64_t eta_step_budget(int64_t max_steps, int64_t max_epochs, int64_t batches_per_epoch, int64_t batches_per_step);

// Estimated seconds left: the smaller of the step budget's and the time budget's (0 = none).
double eta_seconds(double elapsed, int64_t step, int64_t start_step, double start_elapsed,
                   int64_t max_steps, double max_seconds);

}  // namespace attn
