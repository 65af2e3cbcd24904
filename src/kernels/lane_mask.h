// Private to src/kernels, src/ops and src/train: the AVX-512 mask of the lanes a 16-float chunk covers when
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

// v's lanes of `mask` stored at p; a plain store when all 16 are on. A masked store runs at a
// fraction of the plain one's rate on AMD's AVX-512 CPUs (a Zen 5: attention's backward 13% faster
// with plain stores in its tiles), and row bodies are whole chunks.
inline void store16(float* p, __mmask16 mask, __m512 v) {
  if (mask == 0xffff)
    _mm512_storeu_ps(p, v);
  else
    _mm512_mask_storeu_ps(p, mask, v);
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

// The 8 floats at p with the lanes of `mask` (lane_mask8(left)), 0 elsewhere; a plain load when
// all 8 are covered: a masked load or store runs at a fraction of the plain one's rate on some
// CPUs (AMD's), and row bodies are whole chunks.
inline __m256 load8(const float* p, int64_t left, __m256i mask) {
  return left >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}
inline void store8(float* p, int64_t left, __m256i mask, __m256 v) {
  if (left >= 8)
    _mm256_storeu_ps(p, v);
  else
    _mm256_maskstore_ps(p, mask, v);
}

}  // namespace attn::detail
#endif
