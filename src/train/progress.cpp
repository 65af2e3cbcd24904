#include "attn/train/progress.h"

#include <ctime>

#include <algorithm>
#include <cmath>

#include "attn/error.h"

namespace attn {

double process_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

Stopwatch::Stopwatch(BudgetClock clock)
    : clock_(clock), wall_start_(std::chrono::steady_clock::now()),
      cpu_start_(process_cpu_seconds()) {}

double Stopwatch::seconds() const {
  if (clock_ == BudgetClock::cpu) return process_cpu_seconds() - cpu_start_;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  long t = static_cast<long>(s + 0.5);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

ProgressLog::ProgressLog(const std::string& path) {
  if (path.empty()) return;
  file_ = std::fopen(path.c_str(), "a+");
  check(file_ != nullptr, path, ": cannot open for writing");
  // A run killed while writing a line leaves it without its '\n'; the next line starts on its own.
  if (std::fseek(file_, -1, SEEK_END) == 0) {
    const int last = std::fgetc(file_);
    std::fseek(file_, 0, SEEK_END);  // a read is followed by a write only after a seek
    if (last != '\n') std::fputc('\n', file_);
  }
}

ProgressLog::~ProgressLog() {
  if (file_) std::fclose(file_);
}

void ProgressLog::write(const nlohmann::json& record, const std::string& line) {
  if (file_) {
    std::fputs((record.dump() + "\n").c_str(), file_);
    std::fflush(file_);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

bool budget_spent(int64_t step, double elapsed, int64_t epochs_done, int64_t max_steps, double max_seconds,
                  int64_t max_epochs) {
  return (max_steps > 0 && step >= max_steps) || (max_seconds > 0 && elapsed >= max_seconds) ||
         (max_epochs > 0 && epochs_done >= max_epochs);
}

int64_t eta_step_budget(int64_t max_steps, int64_t max_epochs, int64_t batches_per_epoch, int64_t batches_per_step) {
  if (max_epochs <= 0) return max_steps;
  const int64_t epoch_steps = (max_epochs * batches_per_epoch + batches_per_step - 1) / batches_per_step;
  return max_steps > 0 ? std::min(max_steps, epoch_steps) : epoch_steps;
}

double eta_seconds(double elapsed, int64_t step, int64_t start_step, double start_elapsed,
                   int64_t max_steps, double max_seconds) {
  double eta = INFINITY;
  if (max_steps > 0 && step > start_step) {
    double per_step = (elapsed - start_elapsed) / static_cast<double>(step - start_step);
    eta = std::min(eta, per_step * static_cast<double>(max_steps - step));
  }
  if (max_seconds > 0) eta = std::min(eta, max_seconds - elapsed);
  return std::max(0.0, eta);
}

}  // namespace attn
