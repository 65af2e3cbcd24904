// Dropout's keep bits and rows (dropout_bits_impl.h) on avx2::Lanes.
#include "../dropout_bits_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_dropout_bits<Isa::avx2>(KernelTable& t) {
  dropout_lanes::fill_with<avx2::Lanes>(t);
}

}  // namespace attn::detail
