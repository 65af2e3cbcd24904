// Softmax and log-softmax over the last dimension, both computed stably (max subtracted).
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

// softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x)
Var softmax(const Var& x);
// log_softmax(x)_i = x_i - max x - log sum_j exp(x_j - max x)
Var log_softmax(const Var& x);

// Row kernels shared with attention and decoding: n rows of length d, dense.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t d);
void log_softmax_rows(const float* x, float* y, int64_t rows, int64_t d);

}  // namespace attn
