// The dispatch table (include/attn/kernels/dispatch.h): which kernel computes each product.
// Figures are 2-thread measurements: bench_gemm, bench_gemm_int8 and bench_translate on an AMD
// Zen 3 (AVX2) and a Zen 5 (AVX-512 BF16/VNNI); docs/performance.md has the commands.
#include "attn/kernels/dispatch.h"

#include <cstdio>

#include "attn/kernels/cpu.h"
#include "attn/kernels/gemm_few_rows.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_panels.h"
#include "attn/kernels/gemm_s8_gemv.h"
#include "gemm_backends.h"

namespace attn {
namespace {

using C = ProductClass;
using K = Kernel;
using P = Precision;

// First match wins. Unlisted products: dnnl_sgemm.
const std::vector<Rule> kTable = {
    // ---- fp32 x W^T (linear layers) ----
    {.cls = C::x_wt, .m_max = kFewRowsMax, .kernel = K::few_rows,
     .why = "decoding at batch 1 or a beam: W read in place, 0.9-2.1x dnnl_sgemm with W streamed (Zen 3), "
            "1.2-2.2x at m = 1 (Zen 5, W read as one stream)"},
    {.cls = C::x_wt, .m_min = 16, .m_max = 32, .kernel = K::onednn_matmul,
     .why = "a decoding step of a few sentences x beams: 1.2-1.7x dnnl_sgemm"},
    {.cls = C::x_wt, .isa = IsaNeed::avx512, .m_max = 512, .kernel = K::onednn_matmul,
     .why = "batches of beams, short encoder batches: 1.1-2.5x dnnl_sgemm (Zen 5), creation included"},
    {.cls = C::x_wt, .isa = IsaNeed::avx512, .k_min = 1024, .n_max = 1024, .layout = Layout::a_or_b_aliased,
     .kernel = K::onednn_matmul, .why = "the FFN's second layer: 448 against 338 GFLOPS (4096 x 256 x 1024, Zen 5)"},
    // ---- fp32 weight gradients dW = dY^T X ----
    {.cls = C::at_b, .m_min = 256, .k_min = 1024, .n_min = 256,
     .layout = Layout::a_copy_or_b_aliased, .kernel = K::unaliased_copy,
     .why = "aliased rows slow every kernel: 64-69 -> 117-124 GFLOPS for 1024 x 256 x 4096 (Zen 3); "
            "150-186 -> 208 for 256 x 1024 x 4096 (Zen 5), whole training steps 1.01-1.04x"},
    {.cls = C::at_b, .isa = IsaNeed::avx512, .k_min = 1024, .layout = Layout::b_aliased_not_a,
     .kernel = K::onednn_sgemm, .why = "dW2 = dY^T H: 417 against the primitive's 357 GFLOPS (Zen 5)"},
    {.cls = C::at_b, .k_min = 1024, .n_max = 2047, .kernel = K::onednn_matmul,
     .why = "1.05-1.9x dnnl_sgemm, which stalls at M = 1024-2048"},
    // ---- batches of products (attention heads) ----
    {.cls = C::batched_vectors, .kernel = K::omp_over_batch,
     .why = "vector products of a decoding step: 1.4-2.2x one batched primitive"},
    {.cls = C::batched_blocks, .kernel = K::batched_matmul,
     .why = "one batched primitive: 1.04-1.8x on [32..128 x 64] heads"},
    // ---- one attention block, on the calling thread ----
    {.cls = C::attention_block, .volume_max = 64 * 64 * 64 - 1, .kernel = K::small_block,
     .why = "sentences up to 64 tokens at d_k = 64: no packing to pay for"},
    {.cls = C::attention_block, .kernel = K::onednn_sgemm, .why = "longer blocks: oneDNN's packing pays for itself"},
    // ---- inference with weights converted once ----
    {.cls = C::frozen_weight, .precision = P::int8, .m_max = kS8GemvMaxRows, .kernel = K::s8_rows,
     .why = "attn's kernel ahead of oneDNN's at m <= 4, even at 8 (VNNI)"},
    {.cls = C::frozen_weight, .precision = P::int8, .isa = IsaNeed::no_int8_dot, .kernel = K::s8_rows,
     .why = "without VNNI oneDNN repacks W at every call: attn's kernel 1.2-4x at every m (Zen 3)"},
    {.cls = C::frozen_weight, .precision = P::int8, .kernel = K::onednn_s8, .why = "VNNI or AMX, W reordered once"},
    {.cls = C::frozen_weight, .isa = IsaNeed::avx512, .m_min = 2, .m_max = 8, .k_min = 512, .n_min = 512,
     .kernel = K::f32_panels,
     .why = "a beam or a few sentences of a model of d_model >= 512, W from memory: read as one stream, "
            "1.7-1.9x oneDNN's packed W at m = 2, 1.1-1.3x at 4-8; with W in cache 0.5-0.75x at 2 (Zen 5)"},
    {.cls = C::frozen_weight, .isa = IsaNeed::avx2_only, .m_min = kPanelRowsMin, .m_max = kPanelRowsMax,
     .kernel = K::f32_panels,
     .why = "oneDNN repacks W at every call: 1.05-1.45x gemm() at m = 24-32 (Zen 3); 1.1-1.5x few_rows at 12-16"},
    {.cls = C::frozen_weight, .isa = IsaNeed::avx512, .m_min = 2, .kernel = K::onednn_f32,
     .why = "no repacking of W at every call; at 2-16 rows 1.4-2.8x few_rows, which sums lanes (Zen 5)"},
    {.cls = C::frozen_weight, .kernel = K::f32_weight, .why = "the x W^T rules above"},
    {.cls = C::frozen_weight, .precision = P::bf16, .kernel = K::onednn_bf16, .why = "bf16 products in hardware"},
    {.cls = C::frozen_weight, .precision = P::bf16, .kernel = K::f32_of_bf16,
     .why = "no bf16 matmul: the rounded values multiplied in f32, at f32's speed"},
    // ---- training in bf16 ----
    {.cls = C::rounded_bf16, .precision = P::bf16, .kernel = K::onednn_bf16, .why = "bf16 products in hardware"},
    {.cls = C::rounded_bf16, .precision = P::bf16, .kernel = K::f32_of_bf16,
     .why = "no bf16 matmul: operands rounded once and kept as f32, 0.93-1.0x fp32's speed"},
};

// The kernels' instruction set (kernels/cpu.h: chosen from cpuid at start-up, ATTN_ISA may lower it).
bool isa_has(IsaNeed need) {
  switch (need) {
    case IsaNeed::any: return true;
    case IsaNeed::avx512: return active_isa() == Isa::avx512;
    case IsaNeed::avx2_only: return active_isa() != Isa::avx512;
    case IsaNeed::no_int8_dot: return !cpu_has_int8_dot();
  }
  return false;
}

bool layout_matches(Layout l, const Product& p) {
  switch (l) {
    case Layout::any: return true;
    case Layout::a_or_b_aliased: return p.a_aliased || p.b_aliased;
    case Layout::b_aliased_not_a: return p.b_aliased && !p.a_aliased;
    case Layout::a_copy_or_b_aliased: return p.a_copy || p.b_aliased;
  }
  return false;
}

bool matches(const Rule& r, const Product& p) {
  return r.cls == p.cls && r.precision == p.precision && p.m >= r.m_min && p.m <= r.m_max && p.k >= r.k_min &&
         p.n >= r.n_min && p.n <= r.n_max && p.m * p.n * p.k <= r.volume_max && layout_matches(r.layout, p) &&
         isa_has(r.isa) && kernel_available(r.kernel);
}

std::string range(int64_t lo, int64_t hi) {
  if (lo == 0 && hi == kNoLimit) return "any";
  if (hi == kNoLimit) return ">= " + std::to_string(lo);
  if (lo == 0) return "<= " + std::to_string(hi);
  return std::to_string(lo) + "-" + std::to_string(hi);
}

const char* isa_name(IsaNeed i) {
  switch (i) {
    case IsaNeed::any: return "any";
    case IsaNeed::avx2_only: return "avx2, no avx512";
    case IsaNeed::avx512: return "avx512";
    case IsaNeed::no_int8_dot: return "no vnni";
  }
  return "?";
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::any: return "any";
    case Layout::a_or_b_aliased: return "A or B rows 4 KB apart";
    case Layout::b_aliased_not_a: return "B rows 4 KB apart, A not";
    case Layout::a_copy_or_b_aliased: return "A rows 2/4 KB apart, or B 4 KB";
  }
  return "?";
}

}  // namespace

const char* kernel_name(Kernel k) {
  switch (k) {
    case K::onednn_sgemm: return "onednn_sgemm";
    case K::onednn_matmul: return "onednn_matmul";
    case K::few_rows: return "few_rows";
    case K::unaliased_copy: return "unaliased_copy";
    case K::omp_over_batch: return "omp_over_batch";
    case K::batched_matmul: return "batched_matmul";
    case K::small_block: return "small_block";
    case K::f32_panels: return "f32_panels";
    case K::onednn_f32: return "onednn_f32";
    case K::s8_rows: return "s8_rows";
    case K::onednn_s8: return "onednn_s8";
    case K::onednn_bf16: return "onednn_bf16";
    case K::f32_of_bf16: return "f32_of_bf16";
    case K::f32_weight: return "f32_weight";
    case K::reference: return "reference";
  }
  return "?";
}

const char* product_class_name(ProductClass c) {
  switch (c) {
    case C::x_wt: return "x W^T";
    case C::at_b: return "A^T B";
    case C::other: return "other";
    case C::batched_vectors: return "batched vectors";
    case C::batched_blocks: return "batched blocks";
    case C::attention_block: return "attention block";
    case C::frozen_weight: return "frozen weight";
    case C::rounded_bf16: return "rounded bf16";
  }
  return "?";
}

bool kernel_available(Kernel k) {
  switch (k) {
    case K::few_rows: return few_rows_available();
    case K::f32_panels: return f32_panels_available();
    case K::s8_rows: return s8_gemv_available();
    case K::onednn_bf16: return onednn_has_bf16_matmul();
    case K::f32_of_bf16: return !onednn_has_bf16_matmul();
    default: return true;
  }
}

const std::vector<Rule>& dispatch_table() { return kTable; }

Kernel choose_kernel(const Product& p) {
  for (const Rule& r : kTable)
    if (matches(r, p)) return r.kernel;
  return Kernel::onednn_sgemm;
}

std::string describe_dispatch_table(bool mark_this_cpu) {
  std::string out;
  char line[512];
  const char* format = "%s%-16s %-5s %-15s %-12s %-7s %-9s %-31s %-15s %s\n";
  std::snprintf(line, sizeof line, format, mark_this_cpu ? "on  " : "", "product", "prec", "cpu", "m", "k", "n",
                "layout", "kernel", "why");
  out += line;
  for (const Rule& r : kTable) {
    const bool here = isa_has(r.isa) && kernel_available(r.kernel);
    std::string m = range(r.m_min, r.m_max);
    if (r.volume_max != kNoLimit) m = "mnk < " + std::to_string(r.volume_max + 1);
    std::snprintf(line, sizeof line, format, !mark_this_cpu ? "" : here ? "*   " : "-   ", product_class_name(r.cls),
                  precision_name(r.precision), isa_name(r.isa), m.c_str(), range(r.k_min, kNoLimit).c_str(),
                  range(r.n_min, r.n_max).c_str(), layout_name(r.layout), kernel_name(r.kernel), r.why);
    out += line;
  }
  out += "any other product: onednn_sgemm\n";
  if (mark_this_cpu) out += "on: * the rule can apply on this CPU, - it cannot (its CPU or its kernel is missing)\n";
  return out;
}

Kernel frozen_weight_kernel(Precision precision, int64_t m, int64_t n, int64_t k) {
  Product p;
  p.cls = C::frozen_weight;
  p.precision = precision;
  p.m = m;
  p.n = n;
  p.k = k;
  return choose_kernel(p);
}

bool f32_packed_for(int64_t m) {
  const Kernel k = frozen_weight_kernel(P::fp32, m);
  return k == K::f32_panels || k == K::onednn_f32;
}

Kernel rounded_bf16_kernel() {
  Product p;
  p.cls = C::rounded_bf16;
  p.precision = P::bf16;
  return choose_kernel(p);
}

namespace {

// Whether kernel k adds the bias in its epilogue for a product of class c: the int8 kernels
// (dequantize_rows, gemm_s8_gemv), fp32 on W packed once (the panels, the f32 primitive), and
// oneDNN's bf16 matmul on rounded operands (gemm_bf16's bias). A frozen bf16 weight's product has
// none: gemm_packed writes the bias into y first.
bool has_bias_epilogue(Kernel k, ProductClass c) {
  switch (k) {
    case K::s8_rows:
    case K::onednn_s8:
    case K::f32_panels:
    case K::onednn_f32: return true;
    case K::onednn_bf16: return c == C::rounded_bf16;
    default: return false;
  }
}

OperandType operands_of(Kernel k) {
  switch (k) {
    case K::onednn_bf16: return OperandType::bf16;
    case K::s8_rows:
    case K::onednn_s8: return OperandType::s8;
    default: return OperandType::f32;  // f32_of_bf16 included: bf16 values kept as f32
  }
}

}  // namespace

ProductPlan forced_plan(ProductClass c, Kernel k) {
  ProductPlan plan;
  plan.kernel = k;
  plan.epilogue = has_bias_epilogue(k, c) ? Epilogue::bias : Epilogue::none;
  plan.operands = operands_of(k);
  return plan;
}

ProductPlan plan_product(const Product& p) {
  Kernel k = choose_kernel(p);
  if (k != K::unaliased_copy) return forced_plan(p.cls, k);
  // the copies' rows alias nothing: the table again for them
  Product q = p;
  q.a_aliased = q.b_aliased = q.a_copy = false;
  ProductPlan plan = forced_plan(p.cls, choose_kernel(q));
  plan.copy_a = p.a_copy;
  plan.copy_b = p.b_aliased;
  return plan;
}

WeightPlan plan_weight(Precision precision, int64_t n, int64_t k) {
  WeightPlan w;
  if (precision == P::int8) {
    w.stored = OperandType::s8;
    w.s8_panels = kernel_available(K::s8_rows);
  } else if (precision == P::bf16) {
    w.stored = plan_product({.cls = C::frozen_weight, .precision = P::bf16}).operands;
  } else {
    // Panels first where the table runs a beam's products on them (AVX-512, a large W), or where
    // they run and oneDNN never gets a packed product (AVX2); without the panels, oneDNN's layout.
    w.f32_panels_first = frozen_weight_kernel(P::fp32, 4, n, k) == K::f32_panels;
    if (!w.f32_panels_first) {
      w.f32_panels_first = kernel_available(K::f32_panels);
      for (int64_t m : {2, 16, 64, 512})
        if (frozen_weight_kernel(P::fp32, m, n, k) == K::onednn_f32) w.f32_panels_first = false;
    }
  }
  return w;
}

OperandType rounded_bf16_operands() {
  return plan_product({.cls = C::rounded_bf16, .precision = P::bf16}).operands;
}

Product gemm_product(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb) {
  Product p;
  p.cls = !trans_a && trans_b ? C::x_wt : trans_a && !trans_b ? C::at_b : C::other;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_aliased = detail::aliased_ld(lda);
  p.b_aliased = detail::aliased_ld(ldb);
  p.a_copy = detail::aliased_ld_of_a(trans_a, lda);
  return p;
}

}  // namespace attn
