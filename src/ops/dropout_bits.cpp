#include "dropout_bits.h"

#include <algorithm>
#include <cmath>

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#include <immintrin.h>
#define ATTN_DROPOUT_AVX512 1
#elif defined(__AVX2__)
#include <immintrin.h>
#endif

#include "../kernels/lane_mask.h"
#include "attn/tensor/random.h"

namespace attn::detail {

DropoutStream dropout_stream(float p, uint64_t seed, uint64_t first) {
  DropoutStream s;
  s.key = stream_key(seed);
  s.first = first;
  // u_k < p  <=>  dropout_bits24(key, k) < p 2^24 (dropout_uniform's definition)
  s.threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(p) * 16777216.0));
  s.keep = 1.0f / (1.0f - p);
  s.key32 = dropout_key32(s.key, first >> 32);
  return s;
}

namespace {

#if ATTN_DROPOUT_AVX512
// The keep bits of the 16 numbers from k0 on (low 32 bits lo0, no carry into the high 32 bits
// among them): dropout_bits24 16 lanes at a time. (maskz shifts with all lanes on: GCC 12 warns
// about the plain ones' undefined source)
uint32_t keep16(uint32_t key32, uint32_t lo0, uint32_t threshold) {
  auto c = [](uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); };
  __m512i x = _mm512_xor_si512(_mm512_add_epi32(c(lo0), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)), c(key32));
  x = _mm512_mullo_epi32(_mm512_xor_si512(x, _mm512_maskz_srli_epi32(0xffff, x, 17)), c(0xed5ad4bbu));
  x = _mm512_mullo_epi32(_mm512_xor_si512(x, _mm512_maskz_srli_epi32(0xffff, x, 11)), c(0xac4c1b51u));
  x = _mm512_mullo_epi32(_mm512_xor_si512(x, _mm512_maskz_srli_epi32(0xffff, x, 15)), c(0x31848babu));
  x = _mm512_maskz_srli_epi32(0xffff, _mm512_xor_si512(x, _mm512_maskz_srli_epi32(0xffff, x, 14)), 8);
  return _mm512_cmpge_epu32_mask(x, c(threshold));
}
#elif defined(__AVX2__)
// The same, 8 lanes at a time.
uint32_t keep8(uint32_t key32, uint32_t lo0, uint32_t threshold) {
  auto c = [](uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); };
  __m256i x = _mm256_xor_si256(_mm256_add_epi32(c(lo0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), c(key32));
  x = _mm256_mullo_epi32(_mm256_xor_si256(x, _mm256_srli_epi32(x, 17)), c(0xed5ad4bbu));
  x = _mm256_mullo_epi32(_mm256_xor_si256(x, _mm256_srli_epi32(x, 11)), c(0xac4c1b51u));
  x = _mm256_mullo_epi32(_mm256_xor_si256(x, _mm256_srli_epi32(x, 15)), c(0x31848babu));
  x = _mm256_srli_epi32(_mm256_xor_si256(x, _mm256_srli_epi32(x, 14)), 8);
  // x < 2^24 and threshold <= 2^24: the signed compare x > threshold - 1 is x >= threshold
  const __m256i keep = _mm256_cmpgt_epi32(x, c(threshold - 1));
  return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(keep)));
}
#endif

#if defined(__AVX2__) && !ATTN_DROPOUT_AVX512
// The lanes of an 8-float chunk whose bit is set in `bits` (lane l: bit l), as a vector mask.
inline __m256 bit_lanes(uint32_t bits) {
  const __m256i b = _mm256_set1_epi32(static_cast<int>(bits & 0xffu));
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(b, lane), lane));
}
#endif

}  // namespace

uint32_t keep_bits(const DropoutStream& s, uint64_t i, int count) {
  const uint64_t k0 = s.first + i;
  const uint32_t valid = count >= 32 ? 0xffffffffu : (1u << count) - 1u;
  const uint32_t threshold = static_cast<uint32_t>(s.threshold);
  // The vector forms need one high half (one 32-bit key) for all 32 numbers.
  if ((k0 >> 32) == (s.first >> 32) && ((k0 + 31) >> 32) == (k0 >> 32)) {
    const uint32_t lo0 = static_cast<uint32_t>(k0);
#if ATTN_DROPOUT_AVX512
    return (keep16(s.key32, lo0, threshold) | keep16(s.key32, lo0 + 16, threshold) << 16) & valid;
#elif defined(__AVX2__)
    uint32_t bits = 0;
    for (int g = 0; g < 4 && 8 * g < count; ++g) bits |= keep8(s.key32, lo0 + 8 * g, threshold) << (8 * g);
    return bits & valid;
#endif
  }
  uint32_t bits = 0;
  for (int l = 0; l < count; ++l)
    bits |= static_cast<uint32_t>(dropout_bits24(s.key, k0 + static_cast<uint64_t>(l)) >= threshold) << l;
  return bits & valid;
}

void dropout_row(const float* x, const float* bias, float* y, int64_t cols, bool relu,
                 const DropoutStream& s, uint64_t index, uint32_t* bits) {
  for (int64_t j = 0; j < cols; j += 32) {
    const int count = static_cast<int>(std::min<int64_t>(32, cols - j));
    uint32_t word = keep_bits(s, index + static_cast<uint64_t>(j), count);
#if ATTN_DROPOUT_AVX512
    const __m512 keep = _mm512_set1_ps(s.keep);
    uint32_t out = 0;
    for (int h = 0; h < 2 && 16 * h < count; ++h) {
      const int64_t c = j + 16 * h;
      const __mmask16 lanes = detail::lane_mask(cols - c);
      __m512 v = _mm512_maskz_loadu_ps(lanes, x + c);
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, bias + c));
      __mmask16 m = static_cast<__mmask16>(word >> (16 * h)) & lanes;
      if (relu) m &= _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);
      detail::store16(y + c, lanes, _mm512_maskz_mul_ps(m, v, keep));
      out |= static_cast<uint32_t>(m) << (16 * h);
    }
    word = out;
#elif defined(__AVX2__)
    const __m256 keep = _mm256_set1_ps(s.keep);
    uint32_t out = 0;
    for (int h = 0; h < 4 && 8 * h < count; ++h) {
      const int64_t c = j + 8 * h;
      const __m256i lanes = detail::lane_mask8(cols - c);
      __m256 v = detail::load8(x + c, cols - c, lanes);
      if (bias) v = _mm256_add_ps(v, detail::load8(bias + c, cols - c, lanes));
      __m256 m = _mm256_and_ps(bit_lanes(word >> (8 * h)), _mm256_castsi256_ps(lanes));
      if (relu) m = _mm256_and_ps(m, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ));
      detail::store8(y + c, cols - c, lanes, _mm256_and_ps(m, _mm256_mul_ps(v, keep)));
      out |= static_cast<uint32_t>(_mm256_movemask_ps(m)) << (8 * h);
    }
    word = out;
#else
    for (int l = 0; l < count; ++l) {
      float v = x[j + l] + (bias ? bias[j + l] : 0.0f);
      bool kept = (word >> l) & 1u;
      if (relu && !(v > 0.0f)) kept = false;
      y[j + l] = kept ? v * s.keep : 0.0f;
      word = kept ? word : word & ~(1u << l);
    }
#endif
    bits[j / 32] = word;
  }
}

void dropout_row_backward(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols) {
  for (int64_t j = 0; j < cols; j += 32) {
    const uint32_t word = bits[j / 32];
#if ATTN_DROPOUT_AVX512
    const __m512 k = _mm512_set1_ps(keep);
    for (int h = 0; h < 2 && j + 16 * h < cols; ++h) {
      const int64_t c = j + 16 * h;
      const __mmask16 lanes = detail::lane_mask(cols - c);
      __m512 g = _mm512_maskz_loadu_ps(lanes, dy + c);
      detail::store16(dx + c, lanes, _mm512_maskz_mul_ps(static_cast<__mmask16>(word >> (16 * h)), g, k));
    }
#elif defined(__AVX2__)
    const __m256 k = _mm256_set1_ps(keep);
    for (int h = 0; h < 4 && j + 8 * h < cols; ++h) {
      const int64_t c = j + 8 * h;
      const __m256i lanes = detail::lane_mask8(cols - c);
      const __m256 g = detail::load8(dy + c, cols - c, lanes);
      detail::store8(dx + c, cols - c, lanes, _mm256_and_ps(bit_lanes(word >> (8 * h)), _mm256_mul_ps(g, k)));
    }
#else
    const int64_t count = std::min<int64_t>(32, cols - j);
    for (int64_t l = 0; l < count; ++l) dx[j + l] = (word >> l) & 1u ? dy[j + l] * keep : 0.0f;
#endif
  }
}

}  // namespace attn::detail
