#include "attn/ops/dropout.h"
#include "attn/ops/relu_dropout.h"

#include <cmath>

#if defined(__AVX512DQ__) && defined(__AVX512VL__)
#include <immintrin.h>
#endif

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/ops/elementwise.h"
#include "grad_target.h"

namespace attn {
namespace {

// The loops below take every pointer and scalar by value (no closure to reload them from after
// each store), so that they vectorise; the mask test is a select, not a branch.

// mask[i] for i in [b, e): 0 when the top 24 bits of number first + i are < threshold, else keep.
void mask_range(float* mask, int64_t b, int64_t e, uint64_t key, uint64_t first, uint64_t threshold,
                float keep) {
#if defined(__AVX512DQ__) && defined(__AVX512VL__)
  // random_bits_keyed 8 lanes at a time (64-bit multiplies): the same numbers as the loop below.
  const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i vkey = _mm512_set1_epi64(static_cast<long long>(key));
  const __m512i vthr = _mm512_set1_epi64(static_cast<long long>(threshold));
  const __m256 vkeep = _mm256_set1_ps(keep);
  auto c = [](uint64_t v) { return _mm512_set1_epi64(static_cast<long long>(v)); };
  for (; b + 8 <= e; b += 8) {
    __m512i k = _mm512_add_epi64(c(first + static_cast<uint64_t>(b)), lane);
    __m512i z = _mm512_xor_si512(vkey, _mm512_mullo_epi64(k, c(0xd1b54a32d192ed03ULL)));
    z = _mm512_add_epi64(z, c(0x9e3779b97f4a7c15ULL));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xff, z, 30)), c(0xbf58476d1ce4e5b9ULL));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xff, z, 27)), c(0x94d049bb133111ebULL));
    z = _mm512_maskz_srli_epi64(0xff, _mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xff, z, 31)), 40);
    __mmask8 kept = _mm512_cmpge_epu64_mask(z, vthr);
    _mm256_storeu_ps(mask + b, _mm256_maskz_mov_ps(kept, vkeep));
  }
#endif
  for (int64_t i = b; i < e; ++i)
    mask[i] = (random_bits_keyed(key, first + static_cast<uint64_t>(i)) >> 40) < threshold ? 0.0f : keep;
}

// y = x m over [b, e)
void mul_range(const float* x, const float* m, float* y, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) y[i] = x[i] * m[i];
}

// The fused ReLU + dropout, forward: m <- m [x > 0] (the mask becomes the derivative) and
// y = max(0, x) m, which is x m where x > 0 (the unfused product, bit for bit) and 0 elsewhere.
void relu_mask_range(const float* x, float* m, float* y, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    bool pos = x[i] > 0.0f;
    y[i] = pos ? x[i] * m[i] : 0.0f;
    m[i] = pos ? m[i] : 0.0f;
  }
}

Tensor new_mask(const Shape& shape, int64_t n, float p, Rng& rng) {
  Tensor mask = Tensor::empty(shape);
  dropout_mask(mask.data<float>(), n, p, rng.seed, rng.take(static_cast<uint64_t>(n)));
  return mask;
}

// dx = dy m, where m is the saved (dropout or ReLU-and-dropout) mask.
void record_mask_backward(const Var& x, const Var& y, const Tensor& mask, int64_t n) {
  record_backward([x, y, mask, n]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(gy.shape());
    const float* pg = gy.data<float>();
    const float* pm = mask.data<float>();
    float* px = gx.data<float>();
    parallel_for(n, 1 << 14, [=](int64_t b, int64_t e) { mul_range(pg, pm, px, b, e); });
    detail::give_grad(x, std::move(gx));
  });
}

}  // namespace

void dropout_mask(float* mask, int64_t n, float p, uint64_t seed, uint64_t first) {
  const float keep = 1.0f / (1.0f - p);
  const uint64_t key = stream_key(seed);
  // u_i < p  <=>  the top 24 bits of the i-th number < p 2^24 (random_uniform's definition)
  const uint64_t threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(p) * 16777216.0));
  parallel_for(n, 1 << 14, [=](int64_t b, int64_t e) { mask_range(mask, b, e, key, first, threshold, keep); });
}

// y = x m,  m_i = [u_i >= p] / (1 - p);  dx = dy m
Var dropout(const Var& x, float p, Rng& rng, bool training) {
  check(p >= 0.0f && p < 1.0f, "dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0.0f) return x;
  Tensor xv = x.value().contiguous();
  int64_t n = xv.numel();
  Tensor mask = new_mask(xv.shape(), n, p, rng);
  Tensor out = Tensor::empty(xv.shape());
  const float* pm = mask.data<float>();
  const float* px = xv.data<float>();
  float* py = out.data<float>();
  parallel_for(n, 1 << 14, [=](int64_t b, int64_t e) { mul_range(px, pm, py, b, e); });
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (grad) record_mask_backward(x, y, mask, n);
  return y;
}

// y = max(0, x) m;  dx = dy m [x > 0]: one pass each way, and one saved tensor (m [x > 0]).
Var relu_dropout(const Var& x, float p, Rng& rng, bool training) {
  check(p >= 0.0f && p < 1.0f, "relu_dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0.0f) return relu(x);
  Tensor xv = x.value().contiguous();
  int64_t n = xv.numel();
  Tensor mask = new_mask(xv.shape(), n, p, rng);
  Tensor out = Tensor::empty(xv.shape());
  const float* px = xv.data<float>();
  float* pm = mask.data<float>();
  float* py = out.data<float>();
  parallel_for(n, 1 << 14, [=](int64_t b, int64_t e) { relu_mask_range(px, pm, py, b, e); });
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (grad) record_mask_backward(x, y, mask, n);
  return y;
}

}  // namespace attn
