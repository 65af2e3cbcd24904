// The one-query attention products (attend_rows_impl.h) on avx2::Lanes.
#include "../attend_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_attend_rows<Isa::avx2>(KernelTable& t) {
  fill_attend_rows_with<avx2::Lanes>(t);
}

}  // namespace attn::detail
