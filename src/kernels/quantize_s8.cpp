// Per-row symmetric quantization of f32 rows to s8 (quantize_rows_s8, gemm_int8.h) or to u8 as
// q + 128 for vpdpbusd (quantize_rows_u8, gemm_s8_gemv.h): one row at a time by the kernel table's
// quantize_row (the plain loop of quantize_s8_impl.h, or AVX2 / AVX-512 in avx2/, avx512/). Every
// form gives the same q and scales as the scalar definition (round half to even). And the way
// back, the int8 product's epilogue (dequantize_rows), the same bits on every Isa.
#include <algorithm>
#include <cstdint>

#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_s8_gemv.h"
#include "attn/parallel.h"
#include "kernel_table.h"
#include "quantize_s8_impl.h"

namespace attn {

namespace detail {

template <>
void fill_quantize_s8<Isa::generic>(KernelTable& t) {
  t.quantize_row = quantize_row_loops<Isa::generic>;
  t.dequantize_row = dequantize_row_loops<Isa::generic>;
}

}  // namespace detail

void quantize_rows_s8(const float* x, int64_t rows, int64_t cols, int64_t ld, int8_t* q, float* scales,
                      int qmax) {
  const auto quantize_row = detail::kernel_table().quantize_row;
  for_each_index(rows, rows * cols >= (1 << 18), [&](int64_t r) {
    scales[r] = quantize_row(x + r * ld, cols, reinterpret_cast<uint8_t*>(q + r * cols), 0, static_cast<float>(qmax));
  });
}

void quantize_rows_u8(const float* x, int64_t rows, int64_t cols, int64_t ld, uint8_t* u, int64_t ldu,
                      float* scales) {
  const auto quantize_row = detail::kernel_table().quantize_row;
  for_each_index(rows, rows * cols >= (1 << 18), [&](int64_t r) {
    scales[r] = quantize_row(x + r * ld, cols, u + r * ldu, 0x80, 127.0f);
    std::fill(u + r * ldu + cols, u + (r + 1) * ldu, uint8_t{128});
  });
}

void dequantize_rows(int64_t m, int64_t n, const int32_t* acc, const float* sx, const float* sw, const float* bias,
                     float beta, float* y, int64_t ldy) {
  const auto dequantize_row = detail::kernel_table().dequantize_row;
  for_each_index(m, m * n >= (1 << 15), [&](int64_t r) { dequantize_row(acc + r * n, sx[r], sw, bias, beta, y + r * ldy, n); });
}

}  // namespace attn
