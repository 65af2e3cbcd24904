// No AVX-512 kernel for the fp32 panels (include/attn/kernels/gemm_panels.h): not measured on
// AVX-512 CPUs, where oneDNN has wider kernels.
#include "../kernel_table.h"

namespace attn::detail {

template <>
void fill_gemm_panels<Isa::avx512>(KernelTable&) {}

}  // namespace attn::detail
