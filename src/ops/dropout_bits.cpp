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
  // u_i < p  <=>  the top 24 bits of the i-th number < p 2^24 (random_uniform's definition)
  s.threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(p) * 16777216.0));
  s.keep = 1.0f / (1.0f - p);
  return s;
}

#if ATTN_DROPOUT_AVX512
namespace {

// The keep bits of the 8 stream numbers from k0 on: random_bits_keyed 8 lanes at a time.
// (maskz shifts with all lanes on: GCC 12 warns about the plain ones' undefined source)
__mmask8 keep8(uint64_t key, uint64_t k0, uint64_t threshold) {
  auto c = [](uint64_t v) { return _mm512_set1_epi64(static_cast<long long>(v)); };
  __m512i k = _mm512_add_epi64(c(k0), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
  __m512i z = _mm512_xor_si512(c(key), _mm512_mullo_epi64(k, c(0xd1b54a32d192ed03ULL)));
  z = _mm512_add_epi64(z, c(0x9e3779b97f4a7c15ULL));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xff, z, 30)), c(0xbf58476d1ce4e5b9ULL));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xff, z, 27)), c(0x94d049bb133111ebULL));
  z = _mm512_maskz_srli_epi64(0xff, _mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xff, z, 31)), 40);
  return _mm512_cmpge_epu64_mask(z, c(threshold));
}

}  // namespace
#elif defined(__AVX2__)
namespace {

// z c mod 2^64 in each 64-bit lane, from 32 x 32 -> 64-bit products (AVX2 has no 64-bit mullo):
// lo(z) lo(c) + (hi(z) lo(c) + lo(z) hi(c)) 2^32
inline __m256i mul64(__m256i z, uint64_t c) {
  const __m256i lo = _mm256_set1_epi64x(static_cast<long long>(c & 0xffffffffu));
  const __m256i hi = _mm256_set1_epi64x(static_cast<long long>(c >> 32));
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(z, 32), lo), _mm256_mul_epu32(z, hi));
  return _mm256_add_epi64(_mm256_mul_epu32(z, lo), _mm256_slli_epi64(cross, 32));
}

// The keep bits of the 4 stream numbers from k0 on: random_bits_keyed 4 lanes at a time.
uint32_t keep4(uint64_t key, uint64_t k0, uint64_t threshold) {
  auto c = [](uint64_t v) { return _mm256_set1_epi64x(static_cast<long long>(v)); };
  const __m256i k = _mm256_add_epi64(c(k0), _mm256_setr_epi64x(0, 1, 2, 3));
  __m256i z = _mm256_xor_si256(c(key), mul64(k, 0xd1b54a32d192ed03ULL));
  z = _mm256_add_epi64(z, c(0x9e3779b97f4a7c15ULL));
  z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), 0xbf58476d1ce4e5b9ULL);
  z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), 0x94d049bb133111ebULL);
  z = _mm256_srli_epi64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 31)), 40);
  // z < 2^24 and threshold <= 2^24: the signed compare z > threshold - 1 is z >= threshold
  const __m256i keep = _mm256_cmpgt_epi64(z, c(threshold - 1));
  return static_cast<uint32_t>(_mm256_movemask_pd(_mm256_castsi256_pd(keep)));
}

// The lanes of an 8-float chunk whose bit is set in `bits` (lane l: bit l), as a vector mask.
inline __m256 bit_lanes(uint32_t bits) {
  const __m256i b = _mm256_set1_epi32(static_cast<int>(bits & 0xffu));
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(b, lane), lane));
}

}  // namespace
#endif

uint32_t keep_bits(const DropoutStream& s, uint64_t i, int count) {
  const uint64_t k0 = s.first + i;
  const uint32_t valid = count >= 32 ? 0xffffffffu : (1u << count) - 1u;
#if ATTN_DROPOUT_AVX512
  uint32_t bits = 0;
  for (int g = 0; g < 4 && 8 * g < count; ++g)
    bits |= static_cast<uint32_t>(keep8(s.key, k0 + 8 * static_cast<uint64_t>(g), s.threshold)) << (8 * g);
  return bits & valid;
#elif defined(__AVX2__)
  uint32_t bits = 0;
  for (int g = 0; g < 8 && 4 * g < count; ++g)
    bits |= keep4(s.key, k0 + 4 * static_cast<uint64_t>(g), s.threshold) << (4 * g);
  return bits & valid;
#else
  uint32_t bits = 0;
  for (int l = 0; l < count; ++l)
    bits |= static_cast<uint32_t>((random_bits_keyed(s.key, k0 + static_cast<uint64_t>(l)) >> 40) >= s.threshold) << l;
  return bits & valid;
#endif
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
      _mm512_mask_storeu_ps(y + c, lanes, _mm512_maskz_mul_ps(m, v, keep));
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
      _mm512_mask_storeu_ps(dx + c, lanes, _mm512_maskz_mul_ps(static_cast<__mmask16>(word >> (16 * h)), g, k));
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
