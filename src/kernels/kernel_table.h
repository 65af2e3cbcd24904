// Private to src/kernels: the table of the hand-written kernels, one per Isa (kernels/cpu.h).
//
// Each kernel's public function (vexp.h, attend_rows.h, ...) checks its arguments, splits the work
// among threads where it does, and calls the entry of kernel_table(): the table of active_isa().
// The entries of Isa I are filled by fill_<kernel><I>, defined in the kernel's translation unit for
// that Isa: src/kernels/<kernel>.cpp for generic (the library's flags), src/kernels/avx2/<kernel>.cpp
// and src/kernels/avx512/<kernel>.cpp (compiled with those instructions, CMakeLists.txt). The
// bodies are written once, in <kernel>_impl.h: templates over a small vector type (avx2::Lanes in
// simd_avx2.h, avx512::Lanes in simd_avx512.h: one interface of loads, masked tails, fma,
// reductions, int32 and u8 x s8 operations), or plain loops the compiler vectorises (Adam's),
// templated on the Isa; the avx2/ and avx512/ units only instantiate them. What differs between
// the two instruction sets is inside the vector type (mask registers, 2^n by vscalefps, vpdpbusd
// with VNNI against vpmaddubsw + vpmaddwd, the transposes) or a constant of it (lanes,
// registers: the tile shapes follow). One kernel has a single form: the fp32 panels
// (avx2/gemm_panels.cpp; oneDNN runs those products on AVX-512 CPUs).
//
// Adding a kernel: its entries here, fill_<kernel> for each Isa (an entry left null means "not on
// this Isa"; the public function says what happens then), a call in make_table (kernel_table.cpp),
// and a test that each Isa the CPU has gives the generic results (tests/kernels/isa_test.cpp).
//
// The per-Isa units define everything in an unnamed namespace or as templates over their own
// types: an inline function they shared with the generic code would be compiled with AVX-512 in
// one object and the linker could keep that copy for all callers.
#pragma once

#include <cstdint>

#include "attn/kernels/adam_update.h"
#include "attn/kernels/cpu.h"
#include "attn/kernels/dropout_bits.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_panels.h"
#include "attn/kernels/gemm_s8_gemv.h"

namespace attn::detail {

struct KernelTable {
  // vexp.h
  float (*max_of)(const float* x, int64_t n) = nullptr;
  float (*sum_exp)(const float* x, int64_t n, float shift) = nullptr;
  float (*exp_shifted)(const float* x, float* y, int64_t n, float shift) = nullptr;
  void (*exp_affine)(const float* x, float* y, int64_t n, float shift, float a, float c, bool accumulate) = nullptr;
  // attend_rows.h
  void (*scores_one_query)(const float* q, const float* k, int64_t ld, int64_t rows, int64_t dk, float scale,
                           float* s) = nullptr;
  void (*weighted_rows)(const float* p, const float* v, int64_t ld, int64_t rows, int64_t dk, float* out) = nullptr;
  void (*scores_one_query_at)(const float* q, const float* const* k, int64_t rows, int64_t dk, float scale,
                              float* s) = nullptr;
  void (*weighted_rows_at)(const float* p, const float* const* v, int64_t rows, int64_t dk, float* out) = nullptr;
  // gemm_small.h: the product on one thread, arguments checked, m, n > 0; `packed` holds k n floats
  // (B^T copied to [k, n]) when g.trans_b
  void (*gemm_small)(const GemmArgs& g, float* packed) = nullptr;
  // gemm_few_rows.h: columns [j0, j1) of x W^T (null: no kernel, gemm() keeps oneDNN)
  void (*few_rows_columns)(const GemmArgs& g, int64_t j0, int64_t j1) = nullptr;
  // gemm_panels.h: panels [p0, p1) for all m rows (null: no kernel)
  void (*panels_run)(int64_t m, const float* x, int64_t ldx, const F32Panels& w, float beta, float* y,
                     int64_t ldy, const float* bias, int64_t p0, int64_t p1) = nullptr;
  // gemm_s8_gemv.h: all rows against column group g (null: no kernel; the AVX-512 one needs VNNI)
  void (*s8_gemv_group)(const S8GemvArgs& a, const S8Panels& w, int64_t g) = nullptr;
  // quantize_s8.cpp: one row to q xor flip; returns its scale
  float (*quantize_row)(const float* x, int64_t cols, uint8_t* out, uint8_t flip, float qmax) = nullptr;
  // quantize_s8.cpp: one row of dequantize_rows (gemm_int8.h)
  void (*dequantize_row)(const int32_t* acc, float s, const float* sw, const float* bias, float beta, float* y,
                         int64_t n) = nullptr;
  // dropout_bits.h
  uint32_t (*keep_bits)(const DropoutStream& s, uint64_t i, int count) = nullptr;
  void (*dropout_row)(const float* x, const float* bias, float* y, int64_t cols, bool relu, const DropoutStream& s,
                      uint64_t index, uint32_t* bits) = nullptr;
  void (*dropout_row_backward)(const float* dy, const uint32_t* bits, float keep, float* dx, int64_t cols) = nullptr;
  // adam_update.h
  void (*adam_update)(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& s) = nullptr;
};

// The table of active_isa(), and of any Isa (the CPU may lack it: for tests that ask first).
const KernelTable& kernel_table();
const KernelTable& kernel_table(Isa isa);

template <Isa I> void fill_vexp(KernelTable& t);
template <Isa I> void fill_attend_rows(KernelTable& t);
template <Isa I> void fill_gemm_small(KernelTable& t);
template <Isa I> void fill_gemm_few_rows(KernelTable& t);
template <Isa I> void fill_gemm_panels(KernelTable& t);
template <Isa I> void fill_gemm_s8_gemv(KernelTable& t);
template <Isa I> void fill_quantize_s8(KernelTable& t);
template <Isa I> void fill_dropout_bits(KernelTable& t);
template <Isa I> void fill_adam_update(KernelTable& t);

// Each defined in its own translation unit (above).
template <> void fill_vexp<Isa::generic>(KernelTable& t);
template <> void fill_vexp<Isa::avx2>(KernelTable& t);
template <> void fill_vexp<Isa::avx512>(KernelTable& t);
template <> void fill_attend_rows<Isa::generic>(KernelTable& t);
template <> void fill_attend_rows<Isa::avx2>(KernelTable& t);
template <> void fill_attend_rows<Isa::avx512>(KernelTable& t);
template <> void fill_gemm_small<Isa::generic>(KernelTable& t);
template <> void fill_gemm_small<Isa::avx2>(KernelTable& t);
template <> void fill_gemm_small<Isa::avx512>(KernelTable& t);
template <> void fill_gemm_few_rows<Isa::generic>(KernelTable& t);
template <> void fill_gemm_few_rows<Isa::avx2>(KernelTable& t);
template <> void fill_gemm_few_rows<Isa::avx512>(KernelTable& t);
template <> void fill_gemm_panels<Isa::generic>(KernelTable& t);
template <> void fill_gemm_panels<Isa::avx2>(KernelTable& t);
template <> void fill_gemm_panels<Isa::avx512>(KernelTable& t);
template <> void fill_gemm_s8_gemv<Isa::generic>(KernelTable& t);
template <> void fill_gemm_s8_gemv<Isa::avx2>(KernelTable& t);
template <> void fill_gemm_s8_gemv<Isa::avx512>(KernelTable& t);
template <> void fill_quantize_s8<Isa::generic>(KernelTable& t);
template <> void fill_quantize_s8<Isa::avx2>(KernelTable& t);
template <> void fill_quantize_s8<Isa::avx512>(KernelTable& t);
// The keep bits of numbers i .. i + count - 1 of s one number at a time: the generic kernel, and
// the vector kernels' form where the 32 numbers cross a 2^32 boundary of the counter.
uint32_t keep_word_scalar(const DropoutStream& s, uint64_t i, int count);
template <> void fill_dropout_bits<Isa::generic>(KernelTable& t);
template <> void fill_dropout_bits<Isa::avx2>(KernelTable& t);
template <> void fill_dropout_bits<Isa::avx512>(KernelTable& t);
template <> void fill_adam_update<Isa::generic>(KernelTable& t);
template <> void fill_adam_update<Isa::avx2>(KernelTable& t);
template <> void fill_adam_update<Isa::avx512>(KernelTable& t);

}  // namespace attn::detail
