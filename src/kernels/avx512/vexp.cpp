// The exp row loops (vexp_impl.h) on avx512::Lanes: AVX-512 (16 lanes).
#include "../kernel_table.h"
#include "../simd_avx512.h"
#include "../vexp_impl.h"

namespace attn::detail {

template <>
void fill_vexp<Isa::avx512>(KernelTable& t) {
  vexp_lanes::fill_with<avx512::Lanes>(t);
}

}  // namespace attn::detail
