// The Adam update's loops (adam_update_impl.h) compiled for AVX-512, with the square roots 16 at
// a time (the instruction is correctly rounded, as std::sqrt).
#include "../adam_update_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {
namespace {

struct Avx512Sqrt {
  static void into(const float* v, float* r, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 k = avx512::lane_mask(n - i);
      avx512::store16(r + i, k, _mm512_maskz_sqrt_ps(k, _mm512_maskz_loadu_ps(k, v + i)));
    }
  }
};

}  // namespace

template <>
void fill_adam_update<Isa::avx512>(KernelTable& t) {
  t.adam_update = adam_update_loops<Isa::avx512, Avx512Sqrt>;
}

}  // namespace attn::detail
