// The Adam update's loops (adam_update_impl.h) compiled for AVX2 + FMA: the compiler's vectors.
#include "../adam_update_impl.h"
#include "../kernel_table.h"

namespace attn::detail {

template <>
void fill_adam_update<Isa::avx2>(KernelTable& t) {
  t.adam_update = adam_update_loops<Isa::avx2, PlainSqrt<Isa::avx2>>;
}

}  // namespace attn::detail
