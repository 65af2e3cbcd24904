// The one-query attention products (attend_rows_impl.h) on avx512::Lanes.
#include "../attend_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {

template <>
void fill_attend_rows<Isa::avx512>(KernelTable& t) {
  fill_attend_rows_with<avx512::Lanes>(t);
}

}  // namespace attn::detail
