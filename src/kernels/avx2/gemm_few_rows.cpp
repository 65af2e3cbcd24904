// gemm_few_rows (gemm_few_rows_impl.h) on avx2::Lanes.
#include "../gemm_few_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_gemm_few_rows<Isa::avx2>(KernelTable& t) {
  t.few_rows_columns = few_rows::run_columns<avx2::Lanes>;
}

}  // namespace attn::detail
