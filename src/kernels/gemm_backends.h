// Private to src/kernels: the oneDNN backends behind attn::gemm (gemm.cpp dispatches to them).
// Each takes arguments already checked by check_gemm_args().
#pragma once

#include <cstdint>
#include <span>
#include <oneapi/dnnl/dnnl.hpp>

#include "attn/kernels/gemm.h"

namespace attn::detail {

// Throws attn::Error naming the bad field when g is not a valid product description.
void check_gemm_args(const GemmArgs& g, const char* who);

void gemm_onednn(const GemmArgs& g);  // dnnl_sgemm

// Rows a multiple of 4 KB apart, whose cache sets alias in oneDNN's packing (half speed on the
// Zen 3 measured, gemm.cpp), and the leading dimension a copy of such an operand takes instead:
// 64 bytes longer. The transposed A of a weight gradient dW = dY^T X aliases already at 2 KB
// (aliased_ld_of_a).
inline bool aliased_ld(int64_t ld) { return ld % 1024 == 0; }
inline bool aliased_ld_of_a(bool trans_a, int64_t ld) { return trans_a ? ld % 512 == 0 : aliased_ld(ld); }
inline int64_t unaliased_ld(int64_t ld) { return ld + 16; }

// oneDNN matmul primitive (cached by shape) over `batch` items, f32 or bf16 inputs.
struct MatmulCall {
  bool bf16 = false;  // a and b point at uint16_t bf16 data when set
  bool trans_a = false, trans_b = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  float* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  // n floats added to every row of every product (the primitive's bias: no pass over C); only
  // with alpha 1
  const float* bias = nullptr;
};
void matmul_onednn(const MatmulCall& call);

// A matmul primitive's attributes as attn makes them: the scratchpad given by the caller (one
// buffer per thread, not one per primitive), and beta y added to the product as a sum post-op.
inline dnnl::primitive_attr matmul_attr(float beta) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  return attr;
}

// The CPU engine every oneDNN primitive and memory object of attn's is made on.
dnnl::engine& onednn_engine();

// One argument of a primitive's call: a layout and the data it describes now, or (memory set) a
// memory object made once, such as packed weights.
struct PrimitiveArg {
  int arg = 0;  // DNNL_ARG_*
  const dnnl::memory::desc* desc = nullptr;
  const void* data = nullptr;
  const dnnl::memory* memory = nullptr;
};

// A number no other primitive of the process gets, made when one is created: the key of the
// memory objects execute_primitive keeps for it.
uint64_t new_primitive_id();

// Runs primitive `id` with `args` on this thread's stream and waits for it. The memory objects for
// the args given by layout are this thread's, made at the primitive's first call on it and
// pointed at each call's data after: making them anew at every call cost an aligned allocation
// each (which sends glibc's malloc to consolidate its fast bins) and oneDNN's checks; with
// libgomp's one-thread teams (attn/parallel.h) that was half of the 14% a one-thread decode of a
// small model spent in libc.
void execute_primitive(uint64_t id, const dnnl::primitive& primitive, std::span<const PrimitiveArg> args);

// The rows of the first piece an m-row product is cut into for the primitives (each row count
// makes a primitive; the cache of them is bounded this way: gemm_onednn.cpp).
int64_t row_piece(int64_t m);

}  // namespace attn::detail
