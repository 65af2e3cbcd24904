// The exp row loops (include/attn/kernels/vexp.h): the public functions call the kernel table;
// the generic forms are the plain std::exp loops (AVX2 and AVX-512: avx2/vexp.cpp, avx512/vexp.cpp).
#include "attn/kernels/vexp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel_table.h"

namespace attn {

namespace detail {
namespace {

float max_of(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

float sum_exp(const float* x, int64_t n, float shift) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - shift);
  return s;
}

float exp_shifted(const float* x, float* y, int64_t n, float shift) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += (y[i] = std::exp(x[i] - shift));
  return s;
}

void exp_affine(const float* x, float* y, int64_t n, float shift, float a, float c, bool accumulate) {
  for (int64_t i = 0; i < n; ++i) {
    float v = a * std::exp(x[i] - shift) + c;
    y[i] = accumulate ? y[i] + v : v;
  }
}

}  // namespace

template <>
void fill_vexp<Isa::generic>(KernelTable& t) {
  t.max_of = max_of;
  t.sum_exp = sum_exp;
  t.exp_shifted = exp_shifted;
  t.exp_affine = exp_affine;
}

}  // namespace detail

float max_of(const float* x, int64_t n) { return detail::kernel_table().max_of(x, n); }
float sum_exp(const float* x, int64_t n, float shift) { return detail::kernel_table().sum_exp(x, n, shift); }
float exp_shifted(const float* x, float* y, int64_t n, float shift) {
  return detail::kernel_table().exp_shifted(x, y, n, shift);
}
void exp_affine(const float* x, float* y, int64_t n, float shift, float a, float c, bool accumulate) {
  detail::kernel_table().exp_affine(x, y, n, shift, a, c, accumulate);
}

}  // namespace attn
