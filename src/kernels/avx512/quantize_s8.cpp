// The AVX-512 row quantization (quantize_s8.cpp): the same q and scales as the plain loop.
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {
namespace {

// quantize_row_loops (quantize_s8_impl.h) 16 lanes at a time, saturated to s8 by vpmovsdb.
float quantize_row(const float* x, int64_t cols, uint8_t* out, uint8_t flip, float qmax) {
  __m512 vmax = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16) vmax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + c)), vmax);
  const __mmask16 tail = static_cast<__mmask16>((1u << (cols - c)) - 1u);
  if (c < cols) vmax = _mm512_max_ps(_mm512_abs_ps(_mm512_maskz_loadu_ps(tail, x + c)), vmax);
  const float amax = _mm512_reduce_max_ps(vmax);
  const float scale = amax > 0.0f ? amax / qmax : 1.0f;
  const float inv = 1.0f / scale;
  const __m512 vinv = _mm512_set1_ps(inv);
  const __m128i vflip = _mm_set1_epi8(static_cast<char>(flip));
  // q = round_half_even(x inv), saturated to s8
  for (c = 0; c + 16 <= cols; c += 16) {
    const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + c), vinv);
    const __m128i q = _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm_xor_si128(q, vflip));
  }
  if (c < cols) {
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + c), vinv);
    const __m128i q = _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v));
    _mm_mask_storeu_epi8(out + c, tail, _mm_xor_si128(q, vflip));
  }
  return scale;
}

}  // namespace

template <>
void fill_quantize_s8<Isa::avx512>(KernelTable& t) {
  t.quantize_row = quantize_row;
}

}  // namespace attn::detail
