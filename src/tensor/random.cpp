#include "attn/tensor/random.h"

#include <cmath>

namespace attn {

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
