// The product of a linear layer (include/attn/kernels/linear.h): the plan, and the call that runs it.
#include "attn/kernels/linear.h"

#include <algorithm>

#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"

namespace attn {

FrozenForms::FrozenForms(Precision p, const float* w_, int64_t n_, int64_t k_, int64_t ldw_)
    : precision(p), w(w_), n(n_), k(k_), ldw(ldw_) {
  if (p != Precision::fp32) packed = pack_weight(p, w, n, k, ldw);
}

const PackedWeight& FrozenForms::f32_packed() const {
  std::call_once(packed_once, [this] {
    packed_f32 = pack_weight(Precision::fp32, w, n, k, ldw);
    packed_made.store(true, std::memory_order_release);
  });
  return *packed_f32;
}

int64_t FrozenForms::converted_bytes() const {
  int64_t bytes = packed ? packed_weight_bytes(*packed) : 0;
  // packed_f32 is written once, under packed_once, before packed_made is set
  return bytes + (packed_made.load(std::memory_order_acquire) ? packed_weight_bytes(*packed_f32) : 0);
}

ProductPlan plan_linear(const LinearArgs& g) {
  if (g.frozen || g.precision == Precision::int8)
    return plan_product({.cls = ProductClass::frozen_weight, .precision = g.precision, .m = g.m, .n = g.n, .k = g.k});
  if (g.precision == Precision::bf16)
    return plan_product({.cls = ProductClass::rounded_bf16, .precision = Precision::bf16});
  return plan_gemm({false, true, g.m, g.n, g.k, 1.0f, 0.0f, g.x, g.k, g.w, g.k, g.y, g.n});
}

namespace {

// y = bias on every row, for a product that adds to y (beta 1).
void bias_into_rows(const float* bias, int64_t m, int64_t n, float* y) {
  parallel_for(m, std::max<int64_t>(1, 16384 / n), [bias, y, n](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) std::copy(bias, bias + n, y + r * n);
  });
}

}  // namespace

void linear_forward(const LinearArgs& g) {
  const ProductPlan plan = plan_linear(g);
  float beta = 0.0f;
  const float* bias = g.bias;
  if (bias && plan.epilogue == Epilogue::none) {  // y starts as the bias, the product adds to it
    bias_into_rows(bias, g.m, g.n, g.y);
    beta = 1.0f;
    bias = nullptr;
  }
  const GemmArgs xwt{false, true, g.m, g.n, g.k, 1.0f, beta, g.x, g.k, g.w, g.k, g.y, g.n};
  const PackedGemmArgs packed{.m = g.m, .x = g.x, .ldx = g.k, .beta = beta, .y = g.y, .ldy = g.n, .kernel = {}, .bias = bias};
  switch (plan.kernel) {
    case Kernel::f32_panels:
    case Kernel::onednn_f32: return gemm_packed(packed, g.frozen->f32_packed());  // the bias in the epilogue
    case Kernel::f32_weight: return gemm(xwt);  // W itself: the x W^T rules
    case Kernel::s8_rows:
    case Kernel::onednn_s8:
      if (g.frozen) return gemm_packed(packed, *g.frozen->packed);
      return gemm_packed(packed, *pack_weight(Precision::int8, g.w, g.n, g.k, g.k));  // quantized for this call
    case Kernel::onednn_bf16:
    case Kernel::f32_of_bf16:
      if (g.frozen) return gemm_packed(packed, *g.frozen->packed);  // no epilogue: y holds the bias
      if (plan.operands == OperandType::bf16)
        return gemm_bf16(GemmBf16Args{false, true, g.m, g.n, g.k, 1.0f, beta, static_cast<const uint16_t*>(g.x_rounded),
                                      g.k, static_cast<const uint16_t*>(g.w_rounded), g.k, g.y, g.n, bias});
      return gemm({false, true, g.m, g.n, g.k, 1.0f, beta, static_cast<const float*>(g.x_rounded), g.k,
                   static_cast<const float*>(g.w_rounded), g.k, g.y, g.n});
    default: return gemm(xwt, plan);  // fp32 in training: gemm's plan for x W^T
  }
}

}  // namespace attn
