// Private to src/kernels: the row quantization (quantize_s8.cpp) as a plain loop (the generic
// table's) and written once over a lane type L (simd_avx2.h, simd_avx512.h: avx2/ and
// avx512/quantize_s8.cpp); the same q and scales. Templates so that each unit has its own copy
// (kernel_table.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "attn/kernels/cpu.h"

namespace attn::detail {

// scale = max|x| / qmax rounded up to 17 significant bits (1 for an all-zero row). With at most 7
// bits in q and 17 in the scale, q x scale is exact in f32, and so is (qmax scale) / qmax: a row
// stored as (q, scale) and widened back to q x scale quantizes again to the same q and scale
// (attn convert's int8 files, include/attn/models/stored_precision.h). The scale is at most 2^-16
// larger than max|x| / qmax.
inline float int8_scale(float amax, float qmax) {
  if (!(amax > 0.0f)) return 1.0f;
  const float s = amax / qmax;
  if (!std::isfinite(s)) return s;
  uint32_t b;
  std::memcpy(&b, &s, sizeof b);
  b = (b + 0x7Fu) & ~0x7Fu;  // round the 23 stored mantissa bits up to 16
  float r;
  std::memcpy(&r, &b, sizeof r);
  return r;
}

// Quantizes one row of `cols` floats to q (s8) xor `flip` per byte (0: s8, 0x80: u8 = q + 128);
// returns the scale. scale = int8_scale(max|x|, qmax), q = round(x / scale) (half to
// even: nearbyint in the default rounding mode).
template <Isa I>
float quantize_row_loops(const float* x, int64_t cols, uint8_t* out, uint8_t flip, float qmax) {
  float amax = 0.0f;
  for (int64_t j = 0; j < cols; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float scale = int8_scale(amax, qmax);
  const float inv = 1.0f / scale;
  for (int64_t j = 0; j < cols; ++j)
    out[j] = static_cast<uint8_t>(static_cast<int8_t>(std::nearbyint(x[j] * inv))) ^ flip;
  return scale;
}

// One row of dequantize_rows (include/attn/kernels/gemm_int8.h): plain loops that the avx2/ and
// avx512/ units compile with those instructions (a baseline x86-64 build would call libm's fma
// once per element).
template <Isa I>
void dequantize_row_loops(const int32_t* acc, float s, const float* sw, const float* bias, float beta, float* y,
                          int64_t n) {
  if (bias)
    for (int64_t j = 0; j < n; ++j) y[j] = std::fma(s * sw[j], static_cast<float>(acc[j]), bias[j]);
  else if (beta == 0.0f)
    for (int64_t j = 0; j < n; ++j) y[j] = (s * sw[j]) * static_cast<float>(acc[j]);
  else
    for (int64_t j = 0; j < n; ++j) y[j] = std::fma(s * sw[j], static_cast<float>(acc[j]), beta * y[j]);
}

// quantize_row_loops a vector at a time: the max of |x| (NaN left out, as std::max(amax, NaN)
// does), then q = round(x inv) in the rounding mode (half to even), saturated to s8 (|q| <= qmax
// in any case).
template <typename L>
float quantize_row_lanes(const float* x, int64_t cols, uint8_t* out, uint8_t flip, float qmax) {
  typename L::V vmax = L::zero();
  for (int64_t c = 0; c < cols; c += L::kLanes) vmax = L::max(L::abs(L::load(x + c, cols - c)), vmax);
  const float amax = L::largest(vmax);
  const float scale = int8_scale(amax, qmax);
  const typename L::V inv = L::set1(1.0f / scale);
  for (int64_t c = 0; c < cols; c += L::kLanes)
    L::store_s8(out + c, cols - c, L::to_int(L::mul(L::load(x + c, cols - c), inv)), flip);
  return scale;
}

}  // namespace attn::detail
