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

// Dropout's numbers, a cheaper stream than random_uniform's over the same (seed, k): the k-th is
// triple32 (a 32-bit hash of three multiply rounds; Wellons' hash-prospector) of k's low 32 bits
// xor a 32-bit key made from the stream key and k's high 32 bits, and dropout keeps 24 of its
// bits. Three 32-bit products an element where splitmix64 takes three 64-bit ones, which AVX2
// makes of three 32-bit ones each: dropout's masks cost a fifth of what they did.
inline uint32_t triple32(uint32_t x) {
  x ^= x >> 17;
  x *= 0xed5ad4bbu;
  x ^= x >> 11;
  x *= 0xac4c1b51u;
  x ^= x >> 15;
  x *= 0x31848babu;
  x ^= x >> 14;
  return x;
}
inline uint32_t dropout_key32(uint64_t key, uint64_t k_high) {
  return static_cast<uint32_t>(splitmix64(key ^ k_high * 0xd1b54a32d192ed03ULL) >> 32);
}
// 24 bits: the k-th number of the stream whose key is stream_key(seed).
inline uint32_t dropout_bits24(uint64_t key, uint64_t k) {
  return triple32(static_cast<uint32_t>(k) ^ dropout_key32(key, k >> 32)) >> 8;
}
// The k-th dropout number of stream `seed`, uniform in [0, 1): element k is dropped when it is < p.
inline float dropout_uniform(uint64_t seed, uint64_t k) {
  return static_cast<float>(dropout_bits24(stream_key(seed), k)) * (1.0f / 16777216.0f);
}

void fill_uniform(Tensor& t, float lo, float hi, Rng& rng);
void fill_normal(Tensor& t, float mean, float std, Rng& rng);

}  // namespace attn
