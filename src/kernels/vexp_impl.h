// Private to src/kernels: the exp row loops (include/attn/kernels/vexp.h) written once over a lane
// type L (simd_avx2.h, simd_avx512.h), instantiated by avx2/vexp.cpp and avx512/vexp.cpp. Tails
// are masked: lanes past n are 0 in the loads and left out of the sums and stores.
#pragma once

#include <cstdint>
#include <limits>

#include "kernel_table.h"

namespace attn::detail::vexp_lanes {

// exp(x) = 2^n exp(r), n = round(x / ln2), r = x - n ln2 (ln2 in two parts, Cody-Waite); exp(r) by
// its Taylor series to degree 7 (|r| <= 0.347: truncation error < 6e-9); below -87.3 (and -inf,
// whose reduction is NaN): 0.
template <typename L>
typename L::V exp(typename L::V x) {
  const typename L::V n = L::round(L::mul(x, L::set1(1.44269504088896341f)));
  typename L::V r = L::fnma(n, L::set1(0.693145751953125f), x);
  r = L::fnma(n, L::set1(1.428606765330187045e-06f), r);
  typename L::V p = L::set1(1.0f / 5040);
  p = L::fma(p, r, L::set1(1.0f / 720));
  p = L::fma(p, r, L::set1(1.0f / 120));
  p = L::fma(p, r, L::set1(1.0f / 24));
  p = L::fma(p, r, L::set1(1.0f / 6));
  p = L::fma(p, r, L::set1(0.5f));
  p = L::fma(p, r, L::set1(1.0f));
  p = L::fma(p, r, L::set1(1.0f));
  return L::blend(L::greater(L::set1(-87.3f), x), L::scale_pow2(p, n), L::zero());
}

// exp(x_i - shift) of the chunk at x + i (0 in lanes past n); *mask: its lanes
template <typename L>
typename L::V exp_chunk(const float* x, int64_t i, int64_t n, typename L::V shift, typename L::Mask* mask) {
  *mask = L::mask(n - i);
  return L::keep(*mask, exp<L>(L::sub(L::load(x + i, n - i, *mask), shift)));
}

// Four running maxima over whole chunks (one chain would wait on each max's latency: 2% of a
// beam-4 server's time on a small model, for a pass over data already in cache), the tail masked.
template <typename L>
float max_of(const float* x, int64_t n) {
  using V = typename L::V;
  const V lowest = L::set1(-std::numeric_limits<float>::infinity());
  V m[4] = {lowest, lowest, lowest, lowest};
  int64_t i = 0;
  for (; i + 4 * L::kLanes <= n; i += 4 * L::kLanes)
    for (int u = 0; u < 4; ++u) m[u] = L::max(m[u], L::load(x + i + u * L::kLanes));
  for (; i < n; i += L::kLanes) {
    const typename L::Mask k = L::mask(n - i);
    m[0] = L::max(m[0], L::blend(k, lowest, L::load(x + i, n - i, k)));
  }
  return L::largest(L::max(L::max(m[0], m[1]), L::max(m[2], m[3])));
}

template <typename L>
float sum_exp(const float* x, int64_t n, float shift) {
  typename L::V s = L::zero();
  const typename L::V sh = L::set1(shift);
  typename L::Mask k;
  int64_t i = 0;
  for (; i + L::kLanes <= n; i += L::kLanes) s = L::add(s, exp<L>(L::sub(L::load(x + i), sh)));
  if (i < n) s = L::add(s, exp_chunk<L>(x, i, n, sh, &k));  // the same sums, lane by lane, as masking every chunk
  return L::sum(s);
}

template <typename L>
float exp_shifted(const float* x, float* y, int64_t n, float shift) {
  typename L::V s = L::zero();
  const typename L::V sh = L::set1(shift);
  typename L::Mask k;
  int64_t i = 0;
  for (; i + L::kLanes <= n; i += L::kLanes) {
    const typename L::V e = exp<L>(L::sub(L::load(x + i), sh));
    L::store(y + i, e);
    s = L::add(s, e);
  }
  if (i < n) {
    const typename L::V e = exp_chunk<L>(x, i, n, sh, &k);
    L::store(y + i, n - i, k, e);
    s = L::add(s, e);
  }
  return L::sum(s);
}

template <typename L>
void exp_affine(const float* x, float* y, int64_t n, float shift, float a, float c, bool accumulate) {
  const typename L::V sh = L::set1(shift), va = L::set1(a), vc = L::set1(c);
  typename L::Mask k;
  for (int64_t i = 0; i < n; i += L::kLanes) {
    typename L::V v = L::fma(va, exp_chunk<L>(x, i, n, sh, &k), vc);
    if (accumulate) v = L::add(v, L::load(y + i, n - i, k));
    L::store(y + i, n - i, k, v);
  }
}

// The four entries of the kernel table, on lanes L.
template <typename L>
void fill_with(KernelTable& t) {
  t.max_of = max_of<L>;
  t.sum_exp = sum_exp<L>;
  t.exp_shifted = exp_shifted<L>;
  t.exp_affine = exp_affine<L>;
}

}  // namespace attn::detail::vexp_lanes
