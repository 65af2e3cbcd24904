// Private to src/kernels: the plain loop of the row quantization (quantize_s8.cpp), one source
// compiled for each Isa that uses it (the generic and the AVX2 tables; template on the Isa so that
// each unit has its own copy, kernel_table.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attn/kernels/cpu.h"

namespace attn::detail {

// Quantizes one row of `cols` floats to q (s8) xor `flip` per byte (0: s8, 0x80: u8 = q + 128);
// returns the scale. scale = max|x| / qmax (1 for an all-zero row), q = round(x / scale) (half to
// even: nearbyint in the default rounding mode).
template <Isa I>
float quantize_row_loops(const float* x, int64_t cols, uint8_t* out, uint8_t flip, float qmax) {
  float amax = 0.0f;
  for (int64_t j = 0; j < cols; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float scale = amax > 0.0f ? amax / qmax : 1.0f;
  const float inv = 1.0f / scale;
  for (int64_t j = 0; j < cols; ++j)
    out[j] = static_cast<uint8_t>(static_cast<int8_t>(std::nearbyint(x[j] * inv))) ^ flip;
  return scale;
}

}  // namespace attn::detail
