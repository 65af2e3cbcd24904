// The AVX-512 lanes of gemm_few_rows (the kernel: gemm_few_rows_impl.h).
#include "../gemm_few_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {
namespace {

// 16 floats a vector, 32 registers.
struct Lanes {
  using V = __m512;
  static constexpr int64_t n = 16;
  static constexpr int kRegisters = 32;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load_part(const float* p, int64_t left) { return _mm512_maskz_loadu_ps(avx512::lane_mask(left), p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // out[i] = the sum of v[i]'s lanes, i < 8: the two halves added, then as AVX2 does
  static void sum8(const V* v, float* out) {
    __m256 h[8];
    for (int i = 0; i < 8; ++i)
      h[i] = _mm256_add_ps(_mm512_castps512_ps256(v[i]),
                           _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v[i]), 1)));
    avx512::sum8_256(h, out);
  }
};

}  // namespace

template <>
void fill_gemm_few_rows<Isa::avx512>(KernelTable& t) {
  t.few_rows_columns = few_rows::run_columns<Lanes>;
}

}  // namespace attn::detail
