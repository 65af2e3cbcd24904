// The real positions of a padded batch, moved to and from a packed block of rows (inference;
// CTranslate2's Padder). An encoder's position-wise layers (the projections, the FFN, the layer
// norms and residuals) then run on sum(lengths) rows instead of batch x max(lengths): sources of
// 9 to 29 tokens in one batch of 32 are 636 rows instead of 928.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/tensor/tensor.h"

namespace attn {

struct RealRows {
  int64_t batch = 0, len = 0;
  std::vector<int64_t> rows;  // b len + t of each real position, in order
};

// key_padding: i32 [batch, len], nonzero = padding.
RealRows real_rows(const Tensor& key_padding);
// x [batch, len, C] -> its real rows [1, rows, C].
Tensor remove_padding(const Tensor& x, const RealRows& r);
// x [1, rows, C] -> [batch, len, C], zeros at the padding.
Tensor restore_padding(const Tensor& x, const RealRows& r);

}  // namespace attn
