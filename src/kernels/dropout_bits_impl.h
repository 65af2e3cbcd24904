// Private to src/kernels: dropout's keep bits and rows (include/attn/kernels/dropout_bits.h)
// written once over a lane type L (simd_avx2.h, simd_avx512.h), instantiated by
// avx2/dropout_bits.cpp and avx512/dropout_bits.cpp: the counter-based hash L::kLanes numbers at a
// time, a 32-bit word of keep bits as 32 / L::kLanes masks.
#pragma once

#include <algorithm>
#include <cstdint>

#include "attn/kernels/dropout_bits.h"
#include "kernel_table.h"

namespace attn::detail::dropout_lanes {

// The keep bits of the L::kLanes numbers from k0 on (low 32 bits lo0, no carry into the high 32
// bits among them): dropout_bits24 (tensor/random.h) in every lane.
template <typename L>
uint32_t keep_lanes(uint32_t key32, uint32_t lo0, uint32_t threshold) {
  typename L::I x = L::ixor(L::iadd(L::iset1(lo0), L::iota()), L::iset1(key32));
  x = L::imul(L::ixor(x, L::template shift_right<17>(x)), L::iset1(0xed5ad4bbu));
  x = L::imul(L::ixor(x, L::template shift_right<11>(x)), L::iset1(0xac4c1b51u));
  x = L::imul(L::ixor(x, L::template shift_right<15>(x)), L::iset1(0x31848babu));
  x = L::template shift_right<8>(L::ixor(x, L::template shift_right<14>(x)));
  // x < 2^24 and threshold <= 2^24: the signed compare x > threshold - 1 is x >= threshold
  return L::bits_of(L::greater(x, L::iset1(threshold - 1)));
}

template <typename L>
uint32_t keep_word(const DropoutStream& s, uint64_t i, int count) {
  const uint64_t k0 = s.first + i;
  const uint32_t valid = count >= 32 ? 0xffffffffu : (1u << count) - 1u;
  const uint32_t threshold = static_cast<uint32_t>(s.threshold);
  // The vector form needs one high half (one 32-bit key) for all 32 numbers.
  if ((k0 >> 32) == (s.first >> 32) && ((k0 + 31) >> 32) == (k0 >> 32)) {
    const uint32_t lo0 = static_cast<uint32_t>(k0);
    uint32_t bits = 0;
    for (int g = 0; g < 32 / L::kLanes && L::kLanes * g < count; ++g)
      bits |= keep_lanes<L>(s.key32, lo0 + L::kLanes * g, threshold) << (L::kLanes * g);
    return bits & valid;
  }
  return keep_word_scalar(s, i, count);
}

template <typename L>
void dropout_row(const float* x, const float* bias, float* y, int64_t cols, bool relu, const DropoutStream& s,
                 uint64_t index, uint32_t* bits) {
  const typename L::V keep = L::set1(s.keep);
  for (int64_t j = 0; j < cols; j += 32) {
    const int count = static_cast<int>(std::min<int64_t>(32, cols - j));
    const uint32_t word = keep_word<L>(s, index + static_cast<uint64_t>(j), count);
    uint32_t out = 0;
    for (int h = 0; h < 32 / L::kLanes && L::kLanes * h < count; ++h) {
      const int64_t c = j + L::kLanes * h, left = cols - c;
      const typename L::Mask lanes = L::mask(left);
      typename L::V v = L::load(x + c, left, lanes);
      if (bias) v = L::add(v, L::load(bias + c, left, lanes));
      typename L::Mask m = L::both(L::mask_of_bits(word >> (L::kLanes * h)), lanes);
      if (relu) m = L::both(m, L::greater(v, L::zero()));
      L::store(y + c, left, lanes, L::keep(m, L::mul(v, keep)));
      out |= L::bits_of(m) << (L::kLanes * h);
    }
    bits[j / 32] = out;
  }
}

template <typename L>
void dropout_row_backward(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols) {
  const typename L::V k = L::set1(keep);
  for (int64_t j = 0; j < cols; j += 32) {
    const uint32_t word = bits[j / 32];
    for (int h = 0; h < 32 / L::kLanes && j + L::kLanes * h < cols; ++h) {
      const int64_t c = j + L::kLanes * h, left = cols - c;
      const typename L::Mask lanes = L::mask(left);
      const typename L::V g = L::load(dy + c, left, lanes);
      L::store(dx + c, left, lanes, L::keep(L::mask_of_bits(word >> (L::kLanes * h)), L::mul(g, k)));
    }
  }
}

// The three entries of the kernel table, on lanes L.
template <typename L>
void fill_with(KernelTable& t) {
  t.keep_bits = keep_word<L>;
  t.dropout_row = dropout_row<L>;
  t.dropout_row_backward = dropout_row_backward<L>;
}

}  // namespace attn::detail::dropout_lanes
