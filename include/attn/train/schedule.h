// Learning-rate schedules. The paper's (§5.3):
//   lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
// ("noam"), a constant rate with optional linear warm-up, and the inverse square root
// lr * min(step / warmup, sqrt(warmup / step)) of fairseq.
// Any of them can be decayed to zero at the end of the training budget:
//   lr_t = schedule(t) * (1 - p)                 decay "linear"
//   lr_t = schedule(t) * (1 + cos(pi p)) / 2     decay "cosine"
// where p in [0, 1] is the fraction of the budget used (steps, or wall time with a time budget).
#pragma once

#include <cstdint>
#include <string>

namespace attn {

struct LrSchedule {
  std::string kind = "noam";  // "noam" | "constant" | "inverse_sqrt"
  double factor = 1.0;        // noam
  double lr = 5e-4;           // constant, inverse_sqrt: the peak rate
  int64_t warmup = 4000;
  int64_t d_model = 512;
  std::string decay = "none";  // "none" | "linear" | "cosine"
};

// step counts from 1; budget_used is p above (ignored when decay is "none").
double learning_rate(const LrSchedule& s, int64_t step, double budget_used = 0.0);

}  // namespace attn
