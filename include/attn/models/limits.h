// The largest sizes a model's configuration may ask for: well above any model a CPU trains, low
// enough that no product of them overflows. config.json readers and `attn train`'s keys check
// against them before anything is allocated.
#pragma once

#include <cstdint>

namespace attn {

struct Limits {
  int64_t vocab = int64_t{1} << 22;
  int64_t width = int64_t{1} << 16;      // d_model, encoder_hidden
  int64_t inner = int64_t{1} << 20;      // d_ff
  int64_t layers = 1000;
  int64_t positions = int64_t{1} << 20;  // max_len, pad_size
};
inline constexpr Limits kLimits{};

}  // namespace attn
