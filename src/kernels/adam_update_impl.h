// Private to src/kernels: the Adam update (include/attn/kernels/adam_update.h) written once,
// compiled for each Isa by adam_update.cpp, avx2/adam_update.cpp and avx512/adam_update.cpp: plain
// loops the compiler vectorises, but for the square roots, which Sqrt takes: `into(v, r, n)`,
// r_i = sqrt(v_i) (PlainSqrt, or LaneSqrt over a lane type). Templates on the Isa (or the lane
// type) so that each unit has its own copy (kernel_table.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attn/kernels/adam_update.h"
#include "attn/kernels/cpu.h"

namespace attn::detail {

// r_i = sqrt(v_i), correctly rounded (std::sqrt's errno check keeps this loop scalar).
template <Isa I>
struct PlainSqrt {
  static void into(const float* v, float* r, int64_t n) {
    for (int64_t i = 0; i < n; ++i) r[i] = std::sqrt(v[i]);
  }
};

// r_i = sqrt(v_i) a vector at a time (the instruction is correctly rounded, as std::sqrt).
template <typename L>
struct LaneSqrt {
  static void into(const float* v, float* r, int64_t n) {
    for (int64_t i = 0; i < n; i += L::kLanes) {
      const typename L::Mask k = L::mask(n - i);
      L::store(r + i, n - i, k, L::sqrt(L::load(v + i, n - i, k)));
    }
  }
};

// In chunks that stay in L1; every loop vectorises (pointers and scalars in locals, sqrt apart).
template <Isa I, typename Sqrt>
void adam_update_loops(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& step) {
  constexpr int64_t kChunk = 256;
  const AdamStep s = step;  // a copy: the stores to w, m, v cannot change it
  float root[kChunk];
  for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
    const int64_t c = std::min(kChunk, n - j0);
    float* W = w + j0;
    const float* G = g + j0;
    float* M = m + j0;
    float* V = v + j0;
    for (int64_t j = 0; j < c; ++j) {
      float gj = G[j] + s.wd * W[j];
      M[j] = s.b1 * M[j] + (1.0f - s.b1) * gj;
      V[j] = s.b2 * V[j] + (1.0f - s.b2) * gj * gj;
    }
    Sqrt::into(V, root, c);
    for (int64_t j = 0; j < c; ++j) W[j] -= s.step_size * M[j] / (root[j] / s.bc2_sqrt + s.eps);
  }
}

}  // namespace attn::detail
