// The AVX2 lanes of gemm_few_rows (the kernel: gemm_few_rows_impl.h).
#include "../gemm_few_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {
namespace {

// 8 floats a vector, 16 registers.
struct Lanes {
  using V = __m256;
  static constexpr int64_t n = 8;
  static constexpr int kRegisters = 16;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load_part(const float* p, int64_t left) { return _mm256_maskload_ps(p, avx2::lane_mask8(left)); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static void sum8(const V* v, float* out) { avx2::sum8_256(v, out); }
};

}  // namespace

template <>
void fill_gemm_few_rows<Isa::avx2>(KernelTable& t) {
  t.few_rows_columns = few_rows::run_columns<Lanes>;
}

}  // namespace attn::detail
