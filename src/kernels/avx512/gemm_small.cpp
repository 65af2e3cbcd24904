// gemm_small (gemm_small_impl.h) on avx512::Lanes.
#include "../gemm_small_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {

template <>
void fill_gemm_small<Isa::avx512>(KernelTable& t) {
  t.gemm_small = gemm_small_lanes::gemm_small<avx512::Lanes>;
}

}  // namespace attn::detail
