// Private to src/kernels and src/ops: the AVX-512 mask of the lanes a 16-float chunk covers when
// `left` floats remain (all 16 when left >= 16, none when left <= 0), for the masked loads and
// stores of row tails.
#pragma once

#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>

namespace attn::detail {

inline __mmask16 lane_mask(int64_t left) {
  if (left <= 0) return 0;
  return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1u);
}

}  // namespace attn::detail
#endif
