// The Adam update (include/attn/kernels/adam_update.h): the kernel table's form for the CPU; the
// generic one is adam_update_impl.h compiled with the library's flags.
#include "attn/kernels/adam_update.h"

#include "adam_update_impl.h"
#include "kernel_table.h"

namespace attn {

namespace detail {

template <>
void fill_adam_update<Isa::generic>(KernelTable& t) {
  t.adam_update = adam_update_loops<Isa::generic, PlainSqrt<Isa::generic>>;
}

}  // namespace detail

void adam_update(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& s) {
  detail::kernel_table().adam_update(w, g, m, v, n, s);
}

}  // namespace attn
