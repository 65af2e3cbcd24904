// The int8 product for few rows (gemm_s8_gemv_impl.h) on avx2::Lanes.
#include "../gemm_s8_gemv_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_gemm_s8_gemv<Isa::avx2>(KernelTable& t) {
  t.s8_gemv_group = s8_lanes::run_group<avx2::Lanes>;
}

}  // namespace attn::detail
