// Which kernel computes a matrix product: one table, read top to bottom, the first rule that
// matches wins (src/kernels/dispatch.cpp holds it; `attn info --kernels` prints it as it resolves
// on this CPU; docs/performance.md "Kernel dispatch" says the same). A rule matches on
//   - the product's class: what is multiplied by what (x W^T, a weight gradient A^T B, a batch of
//     attention heads, one attention block, a weight converted once for inference, ...);
//   - its precision, the CPU's instruction set, and its kernel being there (built and supported);
//   - ranges of m (rows of the output), k (the inner dimension) and n (columns), and where the
//     operands' rows lie (rows a multiple of 4 KB apart alias in the caches: see Layout).
// The table's answer is interpreted in one place, plan_product, into a ProductPlan: the kernel,
// which operands are copied first, whether the bias goes into the kernel's epilogue, and the type
// the operands are multiplied in. The executors in kernels/ run plans and nothing else decides:
// gemm and gemm_batched (kernels/gemm.h), gemm_packed (kernels/gemm_int8.h) and linear_forward
// (kernels/linear.h, the product of a linear layer, which ops/affine.cpp calls); the form a weight
// frozen for inference is prepared in is planned here too (plan_weight).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/kernels/precision.h"

namespace attn {

enum class Kernel {
  onednn_sgemm,     // dnnl_sgemm on OpenMP threads
  onednn_matmul,    // oneDNN's matmul primitive, created once per shape and cached
  few_rows,         // x W^T with W read in place, a few rows at a time (gemm_few_rows.h)
  unaliased_copy,   // the aliased operands copied to rows 64 bytes longer, then the table again
  omp_over_batch,   // OpenMP over the batch, one single-threaded dnnl_sgemm per item
  batched_matmul,   // one batched oneDNN matmul primitive (cached by shape)
  small_block,      // attn's small-matrix kernel on the calling thread (gemm_small.h)
  f32_panels,       // W packed once into panels of 16 outputs (gemm_panels.h)
  onednn_f32,       // oneDNN's f32 matmul, W reordered once into its layout (inference)
  s8_rows,          // attn's int8 kernel over W in panels (gemm_s8_gemv.h)
  onednn_s8,        // oneDNN's int8 matmul, W reordered once per layout
  onednn_bf16,      // oneDNN's bf16 matmul (AVX512-BF16 / AMX; emulated on AVX-512 without them)
  f32_of_bf16,      // bf16 values kept as f32 and multiplied by attn::gemm (AVX2: no bf16 products)
  f32_weight,       // the f32 weight itself, through attn::gemm (the x W^T rules)
  reference,        // the naive loops (gemm_reference): no rule names it, tests force it
};
const char* kernel_name(Kernel k);

// What is multiplied by what.
enum class ProductClass {
  x_wt,            // x W^T, W in PyTorch's [out, in] layout: linear layers' forward
  at_b,            // A^T B: a weight gradient dW = dY^T X
  other,           // any other transposition (dx = dY W, ...)
  batched_vectors, // a batch of products with m == 1 or n == 1, or a batch of one (a decoding step)
  batched_blocks,  // a batch of matrix products (attention heads)
  attention_block, // one (batch, head) block of attention, on the calling thread
  frozen_weight,   // x W^T with W converted once for inference (ops/weight_form.h)
  rounded_bf16,    // bf16-rounded operands (training in bf16)
};
const char* product_class_name(ProductClass c);

// Where the operands' rows lie. Rows a multiple of 4 KB apart (the FFN's d_ff = 1024 or 2048
// columns) or of 2 KB (d_model = 512) map to the same cache sets in oneDNN's packing loops.
enum class Layout {
  any,
  a_or_b_aliased,      // A's or B's rows 4 KB apart
  b_aliased_not_a,     // B's rows 4 KB apart, A's not
  a_copy_or_b_aliased, // A's rows 2 or 4 KB apart (as a weight gradient reads them) or B's 4 KB
};

// What the CPU must have: avx2_only, AVX2 without AVX-512; no_int8_dot, no VNNI (u8 x s8 pairs
// summed in saturating s16: cpu_has_int8_dot() in kernels/precision.h).
enum class IsaNeed { any, avx2_only, avx512, no_int8_dot };

struct Product {
  ProductClass cls = ProductClass::other;
  Precision precision = Precision::fp32;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  bool a_aliased = false, b_aliased = false, a_copy = false;  // Layout's facts
};

inline constexpr int64_t kNoLimit = INT64_MAX;

struct Rule {
  ProductClass cls = ProductClass::other;
  Precision precision = Precision::fp32;
  IsaNeed isa = IsaNeed::any;
  int64_t m_min = 0, m_max = kNoLimit;  // rows, inclusive
  int64_t k_min = 0;
  int64_t n_min = 0, n_max = kNoLimit;
  int64_t volume_max = kNoLimit;  // m n k at most
  Layout layout = Layout::any;
  Kernel kernel = Kernel::onednn_sgemm;
  const char* why = "";  // the measured reason, one line
};

// The table, top to bottom.
const std::vector<Rule>& dispatch_table();
// The kernel for p: the first rule that matches on this CPU (a product no rule names: sgemm).
// The table's raw answer (unaliased_copy included), for plan_product and the tests.
Kernel choose_kernel(const Product& p);
// True when the kernel is built and this CPU runs it.
bool kernel_available(Kernel k);
// The table as text, one rule a line; mark_this_cpu: each marked with whether it can apply here
// (unmarked, the text docs/performance.md quotes, the same on every CPU).
std::string describe_dispatch_table(bool mark_this_cpu = true);

// The type a product's operands are multiplied in: f32 (bf16 values kept as f32 included), raw
// bf16, or s8.
enum class OperandType { f32, bf16, s8 };
// What the kernel adds to its sums besides beta C: the bias (n floats on every row) in its
// epilogue, which costs no pass of its own over C; or nothing, and a bias is written into C first
// with the product added to it (beta 1). Both give the same bits.
enum class Epilogue { none, bias };

// How one product runs: the dispatch table's answer, interpreted once.
struct ProductPlan {
  Kernel kernel = Kernel::onednn_sgemm;  // never unaliased_copy: that rule becomes copy_a/copy_b
  // the unaliased_copy rule: the operand copied to rows 64 bytes longer before the kernel runs
  // (A when its rows alias as the product reads them, B when its rows are 4 KB apart)
  bool copy_a = false, copy_b = false;
  Epilogue epilogue = Epilogue::none;
  OperandType operands = OperandType::f32;
};
// The plan for p: its kernel (after unaliased_copy, the table asked again for the copies), the
// copies, and the epilogue and operand type that kernel has for p's class.
ProductPlan plan_product(const Product& p);
// The plan of a product of class c with kernel k forced (benchmarks, tests): no copies, and k's
// epilogue and operand type.
ProductPlan forced_plan(ProductClass c, Kernel k);

// The forms a weight W [n, k] frozen for inference in precision p is prepared in (pack_weight,
// kernels/gemm_int8.h): what its products will be planned to run on.
struct WeightPlan {
  OperandType stored = OperandType::f32;  // bf16: raw bits; f32: fp32, or bf16 values widened
  bool s8_panels = false;                  // int8: in s8_rows's panels (no row-major copy kept)
  bool f32_panels_first = false;           // fp32: packed into panels first, else oneDNN's layout
};
WeightPlan plan_weight(Precision p, int64_t n, int64_t k);

// The kernel of x W^T over m rows with W [n, k] converted once for inference in precision p
// (n = k = 0: W's shape unknown, so no rule that asks for a size matches).
Kernel frozen_weight_kernel(Precision p, int64_t m, int64_t n = 0, int64_t k = 0);
// Whether an fp32 inference product of m rows runs on W packed once (pack_weight: panels, or
// oneDNN's layout), rather than on W itself.
bool f32_packed_for(int64_t m);
// The kernel of products of bf16-rounded operands in training.
Kernel rounded_bf16_kernel();
// The type bf16-rounded operands are kept in between their products (training in bf16): raw bf16
// where oneDNN multiplies bf16, else the rounded values as f32 (the plan's operand type).
OperandType rounded_bf16_operands();

// The Product of a plain product C = op(A) op(B) (gemm's arguments).
Product gemm_product(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb);

}  // namespace attn
