// Private to src/kernels: the layout of the VNNI panels (include/attn/kernels/gemm_s8_gemv.h),
// shared by the packing (gemm_s8_gemv.cpp) and the kernels (avx2/, avx512/gemm_s8_gemv.cpp).
#pragma once

#include <cstdint>

namespace attn::detail::s8_layout {

constexpr int64_t kPanel = 16;  // columns per panel: one zmm of s32 sums
constexpr int kGroup = 4;       // panels per group: one contiguous stream of 256 bytes a step

// (Always inlined: the per-Isa units must not share an out-of-line copy, kernel_table.h.)
[[gnu::always_inline]] constexpr int64_t panels_of(int64_t n) { return (n + kPanel - 1) / kPanel; }

}  // namespace attn::detail::s8_layout
