// Row counts for oneDNN's matmul primitives. On a Sapphire Rapids machine (AMX), oneDNN 2.6 ran
// products of some row counts past 256 several times slower than their neighbours, in bf16 and
// in int8: m = 464, 496, 816, 848 and 912-992 in steps of 16 (n = k = 512, and x W^T with
// n = 2048), at 25-100 GMAC/s against 150-600 for the rest, while every multiple of 64 ran at
// full speed (docs/performance.md, "Kernel dispatch"). Products past kOnednnNarrowRows rows therefore
// run on a multiple of kOnednnRowBlock rows: padded with zero rows (int8), or split in two calls.
#pragma once

#include <cstdint>

namespace attn {

inline constexpr int64_t kOnednnNarrowRows = 256;
inline constexpr int64_t kOnednnRowBlock = 64;

// The first rows of an m-row product to run in one call: all of them up to kOnednnNarrowRows,
// else m rounded down to a multiple of kOnednnRowBlock (the rest runs in a second call).
inline int64_t onednn_head_rows(int64_t m) {
  return m <= kOnednnNarrowRows ? m : m / kOnednnRowBlock * kOnednnRowBlock;
}

}  // namespace attn
