// Dropout's keep mask as bits (include/attn/kernels/dropout_bits.h): the stream, and the public
// functions calling the kernel table; the generic forms are plain loops (AVX2 and AVX-512:
// avx2/dropout_bits.cpp, avx512/dropout_bits.cpp).
#include "attn/kernels/dropout_bits.h"

#include <algorithm>
#include <cmath>

#include "attn/tensor/random.h"
#include "kernel_table.h"

namespace attn {

DropoutStream dropout_stream(float p, uint64_t seed, uint64_t first) {
  DropoutStream s;
  s.key = stream_key(seed);
  s.first = first;
  // u_k < p  <=>  dropout_bits24(key, k) < p 2^24 (dropout_uniform's definition)
  s.threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(p) * 16777216.0));
  s.keep = 1.0f / (1.0f - p);
  s.key32 = dropout_key32(s.key, first >> 32);
  return s;
}

namespace detail {

uint32_t keep_word_scalar(const DropoutStream& s, uint64_t i, int count) {
  const uint64_t k0 = s.first + i;
  const uint32_t valid = count >= 32 ? 0xffffffffu : (1u << count) - 1u;
  const uint32_t threshold = static_cast<uint32_t>(s.threshold);
  uint32_t bits = 0;
  for (int l = 0; l < count; ++l)
    bits |= static_cast<uint32_t>(dropout_bits24(s.key, k0 + static_cast<uint64_t>(l)) >= threshold) << l;
  return bits & valid;
}

namespace {

void dropout_row(const float* x, const float* bias, float* y, int64_t cols, bool relu,
                 const DropoutStream& s, uint64_t index, uint32_t* bits) {
  for (int64_t j = 0; j < cols; j += 32) {
    const int count = static_cast<int>(std::min<int64_t>(32, cols - j));
    uint32_t word = keep_word_scalar(s, index + static_cast<uint64_t>(j), count);
    for (int l = 0; l < count; ++l) {
      float v = x[j + l] + (bias ? bias[j + l] : 0.0f);
      bool kept = (word >> l) & 1u;
      if (relu && !(v > 0.0f)) kept = false;
      y[j + l] = kept ? v * s.keep : 0.0f;
      word = kept ? word : word & ~(1u << l);
    }
    bits[j / 32] = word;
  }
}

void dropout_row_backward(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols) {
  for (int64_t j = 0; j < cols; j += 32) {
    const uint32_t word = bits[j / 32];
    const int64_t count = std::min<int64_t>(32, cols - j);
    for (int64_t l = 0; l < count; ++l) dx[j + l] = (word >> l) & 1u ? dy[j + l] * keep : 0.0f;
  }
}

}  // namespace

template <>
void fill_dropout_bits<Isa::generic>(KernelTable& t) {
  t.keep_bits = keep_word_scalar;
  t.dropout_row = dropout_row;
  t.dropout_row_backward = dropout_row_backward;
}

}  // namespace detail

uint32_t keep_bits(const DropoutStream& s, uint64_t i, int count) { return detail::kernel_table().keep_bits(s, i, count); }

void dropout_row(const float* x, const float* bias, float* y, int64_t cols, bool relu, const DropoutStream& s,
                 uint64_t index, uint32_t* bits) {
  detail::kernel_table().dropout_row(x, bias, y, cols, relu, s, index, bits);
}

void dropout_row_backward(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols) {
  detail::kernel_table().dropout_row_backward(dy, bits, keep, dx, cols);
}

}  // namespace attn
