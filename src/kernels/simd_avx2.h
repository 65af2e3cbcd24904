// Private to src/kernels/avx2/: the lane helpers of the AVX2 kernels (8 floats a vector). Only
// translation units compiled with -mavx2 -mfma -mf16c include it (kernel_table.h says why).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace attn::avx2 {

// AVX2 has no mask registers: the mask of an 8-float chunk is a vector with all bits set in the
// lanes covered when `left` floats remain (for _mm256_maskload_ps / _mm256_maskstore_ps).
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

// The sum of the 8 lanes: halves, then pairs, then the last two.
inline float lane_sum8(__m256 v) {
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

inline float lane_max8(__m256 v) {
  __m128 b = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  b = _mm_max_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_max_ss(b, _mm_movehdup_ps(b)));
}

// out[i] = the sum of the 8 lanes of v[i], i < 8, by a tree of horizontal adds:
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) for every vector.
inline void sum8_256(const __m256* v, float* out) {
  const __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);  // halves' sums of v0-3, v4-7
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
}

}  // namespace attn::avx2
