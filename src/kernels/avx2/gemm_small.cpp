// gemm_small (gemm_small_impl.h) on avx2::Lanes.
#include "../gemm_small_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_gemm_small<Isa::avx2>(KernelTable& t) {
  t.gemm_small = gemm_small_lanes::gemm_small<avx2::Lanes>;
}

}  // namespace attn::detail
