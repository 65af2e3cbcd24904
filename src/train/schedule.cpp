#include "attn/train/schedule.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"

namespace attn {

namespace {

double undecayed(const LrSchedule& s, int64_t step) {
  double t = static_cast<double>(std::max<int64_t>(step, 1));
  double w = static_cast<double>(std::max<int64_t>(s.warmup, 1));
  if (s.kind == "noam")
    return s.factor * std::pow(static_cast<double>(s.d_model), -0.5) * std::min(std::pow(t, -0.5), t * std::pow(w, -1.5));
  if (s.kind == "constant") return s.warmup > 0 ? s.lr * std::min(1.0, t / w) : s.lr;
  if (s.kind == "inverse_sqrt") return s.lr * std::min(t / w, std::sqrt(w / t));
  fail("schedule: unknown kind '", s.kind, "' (noam, constant or inverse_sqrt)");
}

}  // namespace

double learning_rate(const LrSchedule& s, int64_t step, double budget_used) {
  double lr = undecayed(s, step), p = std::clamp(budget_used, 0.0, 1.0);
  if (s.decay == "none") return lr;
  // lr_t = schedule(t) * (1 - p)
  if (s.decay == "linear") return lr * (1.0 - p);
  // lr_t = schedule(t) * (1 + cos(pi p)) / 2
  if (s.decay == "cosine") return lr * 0.5 * (1.0 + std::cos(M_PI * p));
  fail("schedule: unknown decay '", s.decay, "' (none, linear or cosine)");
}

}  // namespace attn
