// The Adam update of one parameter's elements (train/adam.h owns the optimizer's state):
//   g' = g + wd w,   m = b1 m + (1 - b1) g',   v = b2 v + (1 - b2) g'^2,
//   w -= step_size m / (sqrt(v) / bc2_sqrt + eps)
// with step_size = lr / (1 - b1^t) and bc2_sqrt = sqrt(1 - b2^t) (the bias corrections).
// Single-threaded: the caller splits the elements. Plain loops compiled for each Isa
// (kernels/cpu.h); sqrt correctly rounded on every one, so each gives the bits of the others
// wherever the compiler contracts the same products into FMAs.
#pragma once

#include <cstdint>

namespace attn {

struct AdamStep {
  float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.0f;
  float step_size = 0.0f, bc2_sqrt = 1.0f;
};

// Updates w, m and v over n elements from the gradient g.
void adam_update(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& s);

}  // namespace attn
