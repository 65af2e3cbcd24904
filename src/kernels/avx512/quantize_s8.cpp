// The row quantization (quantize_s8_impl.h) on avx512::Lanes.
#include "../kernel_table.h"
#include "../quantize_s8_impl.h"
#include "../simd_avx512.h"

namespace attn::detail {

template <>
void fill_quantize_s8<Isa::avx512>(KernelTable& t) {
  t.quantize_row = quantize_row_lanes<avx512::Lanes>;
  t.dequantize_row = dequantize_row_loops<Isa::avx512>;
}

}  // namespace attn::detail
