// The Adam update's loops (adam_update_impl.h) compiled for AVX-512, the square roots on avx512::Lanes.
#include "../adam_update_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {

template <>
void fill_adam_update<Isa::avx512>(KernelTable& t) {
  t.adam_update = adam_update_loops<Isa::avx512, LaneSqrt<avx512::Lanes>>;
}

}  // namespace attn::detail
