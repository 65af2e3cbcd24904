// bf16 <-> f32 conversion of whole buffers (see include/attn/kernels/bf16.h).
#include "attn/kernels/bf16.h"

#include <algorithm>

#include "attn/parallel.h"

namespace attn {

namespace {

constexpr int64_t kParallelMin = 1 << 16;  // below this, threads cost more than they save
constexpr int64_t kBlock = 1 << 14;        // elements a thread converts at a time

// f(i) for i in [0, n), in blocks over the threads when n is worth it.
template <class F>
void each_element(int64_t n, F&& f) {
  for_each_index((n + kBlock - 1) / kBlock, n >= kParallelMin, [&](int64_t b) {
    const int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) f(i);
  });
}

}  // namespace

void round_to_bf16(const float* src, uint16_t* dst, int64_t n) {
  each_element(n, [&](int64_t i) { dst[i] = float_to_bf16(src[i]); });
}

void round_through_bf16(const float* src, float* dst, int64_t n) {
  each_element(n, [&](int64_t i) { dst[i] = bf16_to_float(float_to_bf16(src[i])); });
}

void bf16_to_f32(const uint16_t* src, float* dst, int64_t n) {
  each_element(n, [&](int64_t i) { dst[i] = bf16_to_float(src[i]); });
}

}  // namespace attn
