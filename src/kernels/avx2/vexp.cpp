// The exp row loops (vexp_impl.h) on avx2::Lanes: AVX2 + FMA (8 lanes).
#include "../kernel_table.h"
#include "../simd_avx2.h"
#include "../vexp_impl.h"

namespace attn::detail {

template <>
void fill_vexp<Isa::avx2>(KernelTable& t) {
  vexp_lanes::fill_with<avx2::Lanes>(t);
}

}  // namespace attn::detail
