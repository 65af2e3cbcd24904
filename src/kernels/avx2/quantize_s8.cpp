// The row quantization (quantize_s8_impl.h) on avx2::Lanes.
#include "../kernel_table.h"
#include "../quantize_s8_impl.h"
#include "../simd_avx2.h"

namespace attn::detail {

template <>
void fill_quantize_s8<Isa::avx2>(KernelTable& t) {
  t.quantize_row = quantize_row_lanes<avx2::Lanes>;
  t.dequantize_row = dequantize_row_loops<Isa::avx2>;
}

}  // namespace attn::detail
