// The exp row loops (vexp_impl.h) on avx2::Lanes: AVX2 + FMA (8 lanes).
#include "../kernel_table.h"
#include "../simd_avx2.h"
#include "../vexp_impl.h"

namespace attn::detail {

template <>
void fill_vexp<Isa::avx2>(KernelTable& t) {
  using L = avx2::Lanes;
  t.max_of = vexp_lanes::max_of<L>;
  t.sum_exp = vexp_lanes::sum_exp<L>;
  t.exp_shifted = vexp_lanes::exp_shifted<L>;
  t.exp_affine = vexp_lanes::exp_affine<L>;
}

}  // namespace attn::detail
