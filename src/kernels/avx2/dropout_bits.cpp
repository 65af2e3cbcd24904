// The AVX2 forms of dropout's keep bits and rows (include/attn/kernels/dropout_bits.h): the
// counter-based hash 8 lanes at a time, masks as vectors.
#include <algorithm>

#include "../kernel_table.h"
#include "../simd_avx2.h"
#include "attn/tensor/random.h"

namespace attn::detail {
namespace {

using avx2::lane_mask8;
using avx2::load8;
using avx2::store8;

// The keep bits of the 8 numbers from k0 on (low 32 bits lo0, no carry into the high 32 bits
// among them): dropout_bits24 8 lanes at a time.
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

// The lanes of an 8-float chunk whose bit is set in `bits` (lane l: bit l), as a vector mask.
inline __m256 bit_lanes(uint32_t bits) {
  const __m256i b = _mm256_set1_epi32(static_cast<int>(bits & 0xffu));
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(b, lane), lane));
}

uint32_t keep_word(const DropoutStream& s, uint64_t i, int count) {
  const uint64_t k0 = s.first + i;
  const uint32_t valid = count >= 32 ? 0xffffffffu : (1u << count) - 1u;
  const uint32_t threshold = static_cast<uint32_t>(s.threshold);
  // The vector forms need one high half (one 32-bit key) for all 32 numbers.
  if ((k0 >> 32) == (s.first >> 32) && ((k0 + 31) >> 32) == (k0 >> 32)) {
    const uint32_t lo0 = static_cast<uint32_t>(k0);
    uint32_t bits = 0;
    for (int g = 0; g < 4 && 8 * g < count; ++g) bits |= keep8(s.key32, lo0 + 8 * g, threshold) << (8 * g);
    return bits & valid;
  }
  return keep_word_scalar(s, i, count);
}

void dropout_row(const float* x, const float* bias, float* y, int64_t cols, bool relu,
                 const DropoutStream& s, uint64_t index, uint32_t* bits) {
  for (int64_t j = 0; j < cols; j += 32) {
    const int count = static_cast<int>(std::min<int64_t>(32, cols - j));
    uint32_t word = keep_word(s, index + static_cast<uint64_t>(j), count);
    const __m256 keep = _mm256_set1_ps(s.keep);
    uint32_t out = 0;
    for (int h = 0; h < 4 && 8 * h < count; ++h) {
      const int64_t c = j + 8 * h;
      const __m256i lanes = lane_mask8(cols - c);
      __m256 v = load8(x + c, cols - c, lanes);
      if (bias) v = _mm256_add_ps(v, load8(bias + c, cols - c, lanes));
      __m256 m = _mm256_and_ps(bit_lanes(word >> (8 * h)), _mm256_castsi256_ps(lanes));
      if (relu) m = _mm256_and_ps(m, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ));
      store8(y + c, cols - c, lanes, _mm256_and_ps(m, _mm256_mul_ps(v, keep)));
      out |= static_cast<uint32_t>(_mm256_movemask_ps(m)) << (8 * h);
    }
    word = out;
    bits[j / 32] = word;
  }
}

void dropout_row_backward(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols) {
  for (int64_t j = 0; j < cols; j += 32) {
    const uint32_t word = bits[j / 32];
    const __m256 k = _mm256_set1_ps(keep);
    for (int h = 0; h < 4 && j + 8 * h < cols; ++h) {
      const int64_t c = j + 8 * h;
      const __m256i lanes = lane_mask8(cols - c);
      const __m256 g = load8(dy + c, cols - c, lanes);
      store8(dx + c, cols - c, lanes, _mm256_and_ps(bit_lanes(word >> (8 * h)), _mm256_mul_ps(g, k)));
    }
  }
}

}  // namespace

template <>
void fill_dropout_bits<Isa::avx2>(KernelTable& t) {
  t.keep_bits = keep_word;
  t.dropout_row = dropout_row;
  t.dropout_row_backward = dropout_row_backward;
}

}  // namespace attn::detail
