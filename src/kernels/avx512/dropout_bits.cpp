// Dropout's keep bits and rows (dropout_bits_impl.h) on avx512::Lanes.
#include "../dropout_bits_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {

template <>
void fill_dropout_bits<Isa::avx512>(KernelTable& t) {
  dropout_lanes::fill_with<avx512::Lanes>(t);
}

}  // namespace attn::detail
