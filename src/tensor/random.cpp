#include "attn/tensor/random.h"

#include <cmath>

namespace attn {

static uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t random_bits(uint64_t seed, uint64_t k) { return splitmix64(splitmix64(seed) ^ k * 0xd1b54a32d192ed03ULL); }

float Rng::uniform() { return random_uniform(seed, take(1)); }

float Rng::normal() {
  // Box-Muller on two uniforms; 1 - u keeps the logarithm finite.
  float u1 = 1.0f - uniform(), u2 = uniform();
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853071795864f * u2);
}

uint64_t Rng::below(uint64_t n) { return random_bits(seed, take(1)) % n; }

void fill_uniform(Tensor& t, float lo, float hi, Rng& rng) {
  float* p = t.data<float>();
  uint64_t first = rng.take(static_cast<uint64_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = lo + (hi - lo) * random_uniform(rng.seed, first + i);
}

void fill_normal(Tensor& t, float mean, float std, Rng& rng) {
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = mean + std * rng.normal();
}

}  // namespace attn
