// The product of a linear layer, y = x W^T + bias over m rows, run as the dispatch table plans it
// (kernels/dispatch.h). ops/affine.cpp hands over the operands and the forms W is kept in; which
// kernel runs, on which form of W, and whether the bias goes into the kernel's epilogue or into y
// first (the same bits) is decided here, so that ops/ never reads the table's answer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/precision.h"

namespace attn {

// A weight W [n, k] (f32, row stride ldw; not owned: it must outlive the forms) frozen for
// inference in precision p, and the forms its products run on (plan_weight): bf16 or int8
// converted at once; for fp32, W itself, and W packed (pack_weight), made by the first product
// planned on it, once: a model decoded one sentence at a time never needs it.
struct FrozenForms {
  FrozenForms(Precision p, const float* w, int64_t n, int64_t k, int64_t ldw);

  Precision precision;
  const float* w;
  int64_t n = 0, k = 0, ldw = 0;
  std::shared_ptr<const PackedWeight> packed;  // bf16 or int8: W converted, made at once

  const PackedWeight& f32_packed() const;  // fp32: W packed, made on first use
  int64_t converted_bytes() const;         // the bytes of the forms made so far, beside W

 private:
  mutable std::once_flag packed_once;
  mutable std::shared_ptr<const PackedWeight> packed_f32;
  mutable std::atomic<bool> packed_made{false};
};

struct LinearArgs {
  Precision precision = Precision::fp32;
  int64_t m = 0, n = 0, k = 0;
  const float* x = nullptr;     // [m, k], dense
  const float* w = nullptr;     // W [n, k], dense f32
  float* y = nullptr;           // [m, n], dense, written (not read)
  const float* bias = nullptr;  // [n] added to every row, or null
  // Inference: W's frozen forms. Null: W itself (fp32, bf16 in training), or for int8 W quantized
  // at this call.
  const FrozenForms* frozen = nullptr;
  // bf16 without frozen forms (training): x and W rounded, in the type rounded_bf16_operands()
  // gives (kernels/dispatch.h); the caller keeps them for its backward.
  const void* x_rounded = nullptr;
  const void* w_rounded = nullptr;
};

// The plan of g's product: with frozen forms (or int8), the table's frozen-weight rules; bf16
// otherwise, its rounded-operand rules; fp32 otherwise, gemm's x W^T rules.
ProductPlan plan_linear(const LinearArgs& g);
// y = x W^T + bias, by plan_linear(g).
void linear_forward(const LinearArgs& g);

}  // namespace attn
