// Dropout's keep bits and rows (dropout_bits_impl.h) on avx2::Lanes.
#include "../dropout_bits_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_dropout_bits<Isa::avx2>(KernelTable& t) {
  using L = avx2::Lanes;
  t.keep_bits = dropout_lanes::keep_word<L>;
  t.dropout_row = dropout_lanes::dropout_row<L>;
  t.dropout_row_backward = dropout_lanes::dropout_row_backward<L>;
}

}  // namespace attn::detail
