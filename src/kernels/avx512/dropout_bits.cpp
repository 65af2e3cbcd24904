// The AVX-512 forms of dropout's keep bits and rows (include/attn/kernels/dropout_bits.h): the
// counter-based hash 16 lanes at a time, masks in mask registers.
#include <algorithm>

#include "../kernel_table.h"
#include "../simd_avx512.h"
#include "attn/tensor/random.h"

namespace attn::detail {
namespace {

using avx512::lane_mask;
using avx512::store16;

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

uint32_t keep_word(const DropoutStream& s, uint64_t i, int count) {
  const uint64_t k0 = s.first + i;
  const uint32_t valid = count >= 32 ? 0xffffffffu : (1u << count) - 1u;
  const uint32_t threshold = static_cast<uint32_t>(s.threshold);
  // The vector forms need one high half (one 32-bit key) for all 32 numbers.
  if ((k0 >> 32) == (s.first >> 32) && ((k0 + 31) >> 32) == (k0 >> 32)) {
    const uint32_t lo0 = static_cast<uint32_t>(k0);
    return (keep16(s.key32, lo0, threshold) | keep16(s.key32, lo0 + 16, threshold) << 16) & valid;
  }
  return keep_word_scalar(s, i, count);
}

void dropout_row(const float* x, const float* bias, float* y, int64_t cols, bool relu,
                 const DropoutStream& s, uint64_t index, uint32_t* bits) {
  for (int64_t j = 0; j < cols; j += 32) {
    const int count = static_cast<int>(std::min<int64_t>(32, cols - j));
    uint32_t word = keep_word(s, index + static_cast<uint64_t>(j), count);
    const __m512 keep = _mm512_set1_ps(s.keep);
    uint32_t out = 0;
    for (int h = 0; h < 2 && 16 * h < count; ++h) {
      const int64_t c = j + 16 * h;
      const __mmask16 lanes = lane_mask(cols - c);
      __m512 v = _mm512_maskz_loadu_ps(lanes, x + c);
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, bias + c));
      __mmask16 m = static_cast<__mmask16>(word >> (16 * h)) & lanes;
      if (relu) m &= _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);
      store16(y + c, lanes, _mm512_maskz_mul_ps(m, v, keep));
      out |= static_cast<uint32_t>(m) << (16 * h);
    }
    word = out;
    bits[j / 32] = word;
  }
}

void dropout_row_backward(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols) {
  for (int64_t j = 0; j < cols; j += 32) {
    const uint32_t word = bits[j / 32];
    const __m512 k = _mm512_set1_ps(keep);
    for (int h = 0; h < 2 && j + 16 * h < cols; ++h) {
      const int64_t c = j + 16 * h;
      const __mmask16 lanes = lane_mask(cols - c);
      __m512 g = _mm512_maskz_loadu_ps(lanes, dy + c);
      store16(dx + c, lanes, _mm512_maskz_mul_ps(static_cast<__mmask16>(word >> (16 * h)), g, k));
    }
  }
}

}  // namespace

template <>
void fill_dropout_bits<Isa::avx512>(KernelTable& t) {
  t.keep_bits = keep_word;
  t.dropout_row = dropout_row;
  t.dropout_row_backward = dropout_row_backward;
}

}  // namespace attn::detail
