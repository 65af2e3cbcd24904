// The AVX-512 forms of the exp row loops (include/attn/kernels/vexp.h): 16 lanes, masked tails.
#include <limits>

#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {

namespace {

using avx512::lane_mask;
using avx512::store16;

// exp(x) = 2^n exp(r), n = round(x / ln2), r = x - n ln2 (ln2 in two parts, Cody-Waite)
inline __m512 exp16(__m512 x) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  // exp(r) by its Taylor series to degree 7 (|r| <= 0.347: truncation error < 6e-9)
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  __m512 y = _mm512_scalef_ps(p, n);
  // below -87.3 (and -inf, whose reduction is NaN): 0
  __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(tiny, y, _mm512_setzero_ps());
}

float max_of(const float* x, int64_t n) {
  __m512 m = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 k = lane_mask(n - i);
    m = _mm512_mask_max_ps(m, k, m, _mm512_maskz_loadu_ps(k, x + i));
  }
  return _mm512_reduce_max_ps(m);
}

float sum_exp(const float* x, int64_t n, float shift) {
  __m512 s = _mm512_setzero_ps(), sh = _mm512_set1_ps(shift);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 k = lane_mask(n - i);
    __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), sh));
    s = _mm512_mask_add_ps(s, k, s, e);
  }
  return _mm512_reduce_add_ps(s);
}

float exp_shifted(const float* x, float* y, int64_t n, float shift) {
  __m512 s = _mm512_setzero_ps(), sh = _mm512_set1_ps(shift);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 k = lane_mask(n - i);
    __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), sh));
    store16(y + i, k, e);
    s = _mm512_mask_add_ps(s, k, s, e);
  }
  return _mm512_reduce_add_ps(s);
}

void exp_affine(const float* x, float* y, int64_t n, float shift, float a, float c, bool accumulate) {
  const __m512 sh = _mm512_set1_ps(shift), va = _mm512_set1_ps(a), vc = _mm512_set1_ps(c);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 k = lane_mask(n - i);
    __m512 v = _mm512_fmadd_ps(va, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), sh)), vc);
    if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, y + i));
    store16(y + i, k, v);
  }
}

}  // namespace

template <>
void fill_vexp<Isa::avx512>(KernelTable& t) {
  t.max_of = max_of;
  t.sum_exp = sum_exp;
  t.exp_shifted = exp_shifted;
  t.exp_affine = exp_affine;
}

}  // namespace attn::detail
