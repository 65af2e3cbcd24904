// Plain loops over tensors that ops and optimizers share: accumulate, broadcast shapes and the
// reduction a broadcast's gradient needs. No autodiff here.
#pragma once

#include <cstdint>
#include <functional>

#include "attn/tensor/tensor.h"

namespace attn {

// dst += src (same shape; dst dense, src any strides).
void add_into(Tensor& dst, const Tensor& src);
// dst += alpha * src over n floats.
void axpy(int64_t n, float alpha, const float* src, float* dst);

// The shape two operands broadcast to (NumPy rules); an error names both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Strides that read `t` as if it had shape `out` (0 along broadcast dimensions).
Shape broadcast_strides(const Tensor& t, const Shape& out);
// Sums g (shape `from`) down to `to`, the shape an operand had before broadcasting.
Tensor sum_to_shape(const Tensor& g, const Shape& to);

// Runs body(begin, end) over [0, n) split across the OpenMP threads, serially when n < grain.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

}  // namespace attn
