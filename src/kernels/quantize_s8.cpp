// Per-row symmetric quantization of f32 rows to s8 (quantize_rows_s8, gemm_int8.h) or to u8 as
// q + 128 for vpdpbusd (quantize_rows_u8, gemm_s8_gemv.h), vectorised with AVX-512 when built
// for it. Both give the same q and scales as the scalar definition (round half to even).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_s8_gemv.h"

namespace attn {

namespace {

// Quantizes one row of `cols` floats to q (s8) xor `flip` per byte (0: s8, 0x80: u8 = q + 128);
// returns the scale. scale = max|x| / qmax (1 for an all-zero row), q = round(x / scale).
float quantize_row(const float* x, int64_t cols, uint8_t* out, uint8_t flip, float qmax) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
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
#else
  float amax = 0.0f;
  for (int64_t j = 0; j < cols; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float scale = amax > 0.0f ? amax / qmax : 1.0f;
  const float inv = 1.0f / scale;
  for (int64_t j = 0; j < cols; ++j)
    out[j] = static_cast<uint8_t>(static_cast<int8_t>(std::nearbyint(x[j] * inv))) ^ flip;
  return scale;
#endif
}

}  // namespace

void quantize_rows_s8(const float* x, int64_t rows, int64_t cols, int64_t ld, int8_t* q, float* scales,
                      int qmax) {
#pragma omp parallel for schedule(static) if (rows * cols >= (1 << 18))
  for (int64_t r = 0; r < rows; ++r)
    scales[r] = quantize_row(x + r * ld, cols, reinterpret_cast<uint8_t*>(q + r * cols), 0, static_cast<float>(qmax));
}

void quantize_rows_u8(const float* x, int64_t rows, int64_t cols, int64_t ld, uint8_t* u, int64_t ldu,
                      float* scales) {
#pragma omp parallel for schedule(static) if (rows * cols >= (1 << 18))
  for (int64_t r = 0; r < rows; ++r) {
    scales[r] = quantize_row(x + r * ld, cols, u + r * ldu, 0x80, 127.0f);
    std::fill(u + r * ldu + cols, u + (r + 1) * ldu, uint8_t{128});
  }
}

}  // namespace attn
