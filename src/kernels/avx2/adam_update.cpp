// The Adam update's loops (adam_update_impl.h) compiled for AVX2 + FMA, the square roots on avx2::Lanes.
#include "../adam_update_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_adam_update<Isa::avx2>(KernelTable& t) {
  t.adam_update = adam_update_loops<Isa::avx2, LaneSqrt<avx2::Lanes>>;
}

}  // namespace attn::detail
