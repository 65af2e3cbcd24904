// The row quantization's plain loop compiled for AVX2 (quantize_s8_impl.h): the compiler's vectors.
#include "../kernel_table.h"
#include "../quantize_s8_impl.h"

namespace attn::detail {

template <>
void fill_quantize_s8<Isa::avx2>(KernelTable& t) {
  t.quantize_row = quantize_row_loops<Isa::avx2>;
}

}  // namespace attn::detail
