// bfloat16: the upper 16 bits of an IEEE f32 (8 exponent bits, 7 mantissa bits), stored as raw
// uint16_t. Conversion from f32 rounds to nearest, ties to even; NaN stays NaN.
#pragma once

#include <cstdint>
#include <cstring>

namespace attn {

inline uint16_t float_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float bf16_to_float(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// dst[i] = float_to_bf16(src[i]) for i < n, in parallel over attn's threads when n is large.
void round_to_bf16(const float* src, uint16_t* dst, int64_t n);
// dst[i] = bf16_to_float(src[i]).
void bf16_to_f32(const uint16_t* src, float* dst, int64_t n);
// dst[i] = bf16_to_float(float_to_bf16(src[i])): the bf16 value of each, kept as f32.
void round_through_bf16(const float* src, float* dst, int64_t n);

}  // namespace attn
