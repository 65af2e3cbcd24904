// Counter-based random numbers: the k-th number of a stream is a hash of (seed, k), so a
// dropout mask does not depend on the thread count or on the order threads run in, and the
// whole state of a stream is two integers (saved in checkpoints for an exact resume).
#pragma once

#include <cstdint>

#include "attn/tensor/tensor.h"

namespace attn {

struct Rng {
  uint64_t seed = 0;
  uint64_t counter = 0;  // numbers consumed so far

  explicit Rng(uint64_t s = 0, uint64_t c = 0) : seed(s), counter(c) {}
  // Reserves n numbers and returns the index of the first.
  uint64_t take(uint64_t n) {
    uint64_t first = counter;
    counter += n;
    return first;
  }
  float uniform();  // [0, 1)
  float normal();   // N(0, 1)
  uint64_t below(uint64_t n);  // uniform integer in [0, n)
};

// The k-th 64-bit number of stream `seed` (SplitMix64 finaliser over seed and k).
uint64_t random_bits(uint64_t seed, uint64_t k);
// The k-th uniform float in [0, 1) of stream `seed` (24 random bits).
inline float random_uniform(uint64_t seed, uint64_t k) {
  return static_cast<float>(random_bits(seed, k) >> 40) * (1.0f / 16777216.0f);
}

void fill_uniform(Tensor& t, float lo, float hi, Rng& rng);
void fill_normal(Tensor& t, float mean, float std, Rng& rng);

}  // namespace attn
