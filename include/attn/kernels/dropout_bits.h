// Dropout's keep mask as bits (for ops/dropout and ops/linear_dropout), drawn from the
// counter-based stream as the element is used (one pass forward) and kept as one bit per element
// for the backward, where a float mask cost a pass to write it and 4 bytes an element to read it
// back. The rows are vectorised for the CPU's Isa (kernels/cpu.h); every Isa gives the same bits.
//
// Element i of a dropout (its index in the op's stream, counted from `first`) is kept when
// dropout_bits24(key, first + i) >= p 2^24, which is dropout_uniform(seed, first + i) >= p
// (tensor/random.h): the numbers, and so the masks, of dropout_mask().
#pragma once

#include <cstdint>

namespace attn {

struct DropoutStream {
  uint64_t key = 0;        // stream_key(seed)
  uint64_t first = 0;      // stream index of element 0
  uint64_t threshold = 0;  // ceil(p 2^24)
  float keep = 1.0f;       // 1 / (1 - p), the scale of a kept element
  uint32_t key32 = 0;      // dropout_key32(key, first >> 32), the 32-bit key of most elements
};

DropoutStream dropout_stream(float p, uint64_t seed, uint64_t first);

// Bit l (l < count <= 32) says whether element i + l is kept; the bits from count up are 0.
uint32_t keep_bits(const DropoutStream& s, uint64_t i, int count);

// Elements (and so mask words) of a dropout over `rows` rows of `cols`: each row starts a new
// 32-bit word, so that a row's loop never straddles words.
inline int64_t mask_words_per_row(int64_t cols) { return (cols + 31) / 32; }

// y[j] = x[j] (+ bias[j]) scaled by keep where kept (and, with relu, where the sum is > 0), else
// 0, for j < cols, one row; writes the row's keep bits (times [sum > 0] with relu) to bits
// (mask_words_per_row(cols) words). `index` is the stream index of element 0 of the row.
void dropout_row(const float* x, const float* bias, float* y, int64_t cols, bool relu,
                 const DropoutStream& s, uint64_t index, uint32_t* bits);

// dx[j] = dy[j] keep where bit j is set, else 0, for j < cols (one row).
void dropout_row_backward(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols);

}  // namespace attn
