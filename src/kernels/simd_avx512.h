// Private to src/kernels/avx512/: the lane helpers of the AVX-512 kernels (16 floats a vector).
// Only translation units compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl include it
// (kernel_table.h says why; the 8-lane helpers the AVX-512 kernels need are repeated here).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace attn::avx512 {

// The mask of the lanes a 16-float chunk covers when `left` floats remain (all 16 when
// left >= 16, none when left <= 0), for the masked loads and stores of row tails.
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

// out[i] = the sum of the 8 lanes of v[i], i < 8, by a tree of horizontal adds:
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) for every vector (as simd_avx2.h).
inline void sum8_256(const __m256* v, float* out) {
  const __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
}

}  // namespace attn::avx512
