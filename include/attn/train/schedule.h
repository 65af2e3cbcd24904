// Learning-rate schedules. The paper's (§5.3):
//   lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
// ("noam"), a constant rate with optional linear warm-up, and the inverse square root
// lr * min(step / warmup, sqrt(warmup / step)) of fairseq.
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
};

double learning_rate(const LrSchedule& s, int64_t step);  // step counts from 1

}  // namespace attn
