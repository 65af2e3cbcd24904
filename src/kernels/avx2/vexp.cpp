// The AVX2 forms of the exp row loops (include/attn/kernels/vexp.h): 8 lanes, masked tails.
#include <limits>

#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

namespace {

using avx2::lane_mask8;
using avx2::lane_max8;
using avx2::lane_sum8;
using avx2::load8;
using avx2::store8;

// exp as exp16 of avx512/vexp.cpp, 8 lanes; 2^n by building the exponent bits, in two halves so that n = 128
// (x in [88.37, 88.72], a finite result) and n < -126 scale correctly.
inline __m256 exp8(__m256 x) {
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // n clamped to [-254, 254] (-inf, NaN and the tiny are handled below; past 128 the result is inf)
  const __m256i ni = _mm256_cvtps_epi32(_mm256_max_ps(_mm256_min_ps(n, _mm256_set1_ps(254.0f)), _mm256_set1_ps(-254.0f)));
  const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  // below -87.3 (and -inf): 0
  return _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_LT_OQ));
}

// exp(x_i - shift) of the 8 floats at x + i (0 in lanes past n)
inline __m256 exp_chunk(const float* x, int64_t i, int64_t n, __m256 shift, __m256i* mask) {
  *mask = lane_mask8(n - i);
  const __m256 e = exp8(_mm256_sub_ps(load8(x + i, n - i, *mask), shift));
  return _mm256_and_ps(e, _mm256_castsi256_ps(*mask));
}

float max_of(const float* x, int64_t n) {
  const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 m = lowest;
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i k = lane_mask8(n - i);
    m = _mm256_max_ps(m, _mm256_blendv_ps(lowest, load8(x + i, n - i, k), _mm256_castsi256_ps(k)));
  }
  return lane_max8(m);
}

float sum_exp(const float* x, int64_t n, float shift) {
  __m256 s = _mm256_setzero_ps();
  const __m256 sh = _mm256_set1_ps(shift);
  __m256i k;
  for (int64_t i = 0; i < n; i += 8) s = _mm256_add_ps(s, exp_chunk(x, i, n, sh, &k));
  return lane_sum8(s);
}

float exp_shifted(const float* x, float* y, int64_t n, float shift) {
  __m256 s = _mm256_setzero_ps();
  const __m256 sh = _mm256_set1_ps(shift);
  __m256i k;
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 e = exp_chunk(x, i, n, sh, &k);
    store8(y + i, n - i, k, e);
    s = _mm256_add_ps(s, e);
  }
  return lane_sum8(s);
}

void exp_affine(const float* x, float* y, int64_t n, float shift, float a, float c, bool accumulate) {
  const __m256 sh = _mm256_set1_ps(shift), va = _mm256_set1_ps(a), vc = _mm256_set1_ps(c);
  __m256i k;
  for (int64_t i = 0; i < n; i += 8) {
    __m256 v = _mm256_fmadd_ps(va, exp_chunk(x, i, n, sh, &k), vc);
    if (accumulate) v = _mm256_add_ps(v, load8(y + i, n - i, k));
    store8(y + i, n - i, k, v);
  }
}

}  // namespace

template <>
void fill_vexp<Isa::avx2>(KernelTable& t) {
  t.max_of = max_of;
  t.sum_exp = sum_exp;
  t.exp_shifted = exp_shifted;
  t.exp_affine = exp_affine;
}

}  // namespace attn::detail
