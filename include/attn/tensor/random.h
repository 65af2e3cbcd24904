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

// SplitMix64's finaliser: a bijective mix of 64 bits.
inline uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// The stream's key; the k-th number is random_bits_keyed(stream_key(seed), k). Loops hoist the
// key out, and the body (no calls) vectorises.
inline uint64_t stream_key(uint64_t seed) { return splitmix64(seed); }
inline uint64_t random_bits_keyed(uint64_t key, uint64_t k) { return splitmix64(key ^ k * 0xd1b54a32d192ed03ULL); }
// The k-th 64-bit number of stream `seed`.
inline uint64_t random_bits(uint64_t seed, uint64_t k) { return random_bits_keyed(stream_key(seed), k); }
// The k-th uniform float in [0, 1) of stream `seed` (24 random bits).
inline float random_uniform(uint64_t seed, uint64_t k) {
  return static_cast<float>(random_bits(seed, k) >> 40) * (1.0f / 16777216.0f);
}

void fill_uniform(Tensor& t, float lo, float hi, Rng& rng);
void fill_normal(Tensor& t, float mean, float std, Rng& rng);

}  // namespace attn
