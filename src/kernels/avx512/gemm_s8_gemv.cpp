// The int8 product for few rows (gemm_s8_gemv_impl.h) on avx512::Lanes, with VNNI: compiled with
// -mavx512vnni (CMakeLists.txt); in the table of every AVX-512 CPU, used only where cpuid reports
// VNNI (gemm_s8_gemv.cpp).
#include "../gemm_s8_gemv_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {

template <>
void fill_gemm_s8_gemv<Isa::avx512>(KernelTable& t) {
  t.s8_gemv_group = s8_lanes::run_group<avx512::Lanes>;
}

}  // namespace attn::detail
