// Positional encodings (§3.5): PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),
// PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)), interleaved from position 0, computed in double
// and rounded to float as torch_ref.py does.
#pragma once

#include "attn/tensor/tensor.h"

namespace attn {

// [max_len, d_model]; halves: every sin in the first half, every cos in the second (Marian's
// layout: PE(pos, i) = sin, PE(pos, ceil(d_model / 2) + i) = cos of the angle of 2i).
Tensor sinusoid_table(int64_t max_len, int64_t d_model, bool halves = false);

}  // namespace attn
