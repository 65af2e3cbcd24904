// bf16 <-> f32 conversion of whole buffers (see include/attn/kernels/bf16.h).
#include "attn/kernels/bf16.h"

namespace attn {

namespace {
constexpr int64_t kParallelMin = 1 << 16;  // below this, threads cost more than they save
}

void round_to_bf16(const float* src, uint16_t* dst, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) dst[i] = float_to_bf16(src[i]);
}

void round_through_bf16(const float* src, float* dst, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(float_to_bf16(src[i]));
}

void bf16_to_f32(const uint16_t* src, float* dst, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i]);
}

}  // namespace attn
