// gemm_few_rows (gemm_few_rows_impl.h) on avx512::Lanes.
#include "../gemm_few_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {

template <>
void fill_gemm_few_rows<Isa::avx512>(KernelTable& t) {
  t.few_rows_columns = few_rows::run_columns<avx512::Lanes>;
}

}  // namespace attn::detail
