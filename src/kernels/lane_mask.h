// Private to src/kernels and src/ops: the AVX-512 mask of the lanes a 16-float chunk covers when
// `left` floats remain (all 16 when left >= 16, none when left <= 0), for the masked loads and
// stores of row tails; on AVX2-only builds the same for an 8-float chunk, as a vector.
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
#elif defined(__AVX2__)
#include <immintrin.h>

namespace attn::detail {

// AVX2 has no mask registers: the mask of an 8-float chunk is a vector with all bits set in the
// lanes covered (for _mm256_maskload_ps / _mm256_maskstore_ps).
inline __m256i lane_mask8(int64_t left) {
  const int covered = left <= 0 ? 0 : left >= 8 ? 8 : static_cast<int>(left);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(covered), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace attn::detail
#endif
