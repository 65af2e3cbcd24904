// Row loops around exp for softmax and cross-entropy, vectorised with AVX-512 where the CPU
// has it (active_isa(), kernels/cpu.h; 16 lanes; exp by Cody-Waite reduction to [-ln2/2, ln2/2], a degree-7 polynomial and
// a scaling by 2^n; relative error about 1e-7, exp(x) = 0 for x < -87.3, so that masked -inf
// scores give exact zeros), or with AVX2 (8 lanes, the same polynomial); plain std::exp loops
// otherwise. Single-threaded: callers split rows.
#pragma once

#include <cstdint>

namespace attn {

float max_of(const float* x, int64_t n);  // -inf for n == 0
// sum_i exp(x_i - shift)
float sum_exp(const float* x, int64_t n, float shift);
// y_i = exp(x_i - shift), and returns their sum (y may be x)
float exp_shifted(const float* x, float* y, int64_t n, float shift);
// y_i = a exp(x_i - shift) + c, or y_i += that when accumulate
void exp_affine(const float* x, float* y, int64_t n, float shift, float a, float c, bool accumulate);

}  // namespace attn
