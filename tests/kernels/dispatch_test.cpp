// The dispatch table (include/attn/kernels/dispatch.h): first match wins, every product class
// resolves to a kernel that runs here, and docs/performance.md quotes the table as it is.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "attn/kernels/cpu.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm_few_rows.h"

namespace attn {
namespace {

Product product(ProductClass cls, Precision p, int64_t m, int64_t n, int64_t k) {
  Product q;
  q.cls = cls;
  q.precision = p;
  q.m = m;
  q.n = n;
  q.k = k;
  return q;
}

TEST(DispatchTable, EveryClassResolvesToAKernelThatRunsHere) {
  for (ProductClass c : {ProductClass::x_wt, ProductClass::at_b, ProductClass::other, ProductClass::batched_vectors,
                         ProductClass::batched_blocks, ProductClass::attention_block})
    for (int64_t m : {1, 8, 16, 17, 32, 48, 64, 512, 4096}) {
      const Kernel k = choose_kernel(product(c, Precision::fp32, m, 512, 2048));
      EXPECT_TRUE(kernel_available(k)) << product_class_name(c) << " m=" << m << ": " << kernel_name(k);
    }
  for (Precision p : {Precision::fp32, Precision::bf16, Precision::int8})
    for (int64_t m : {1, 8, 16, 17, 32, 48, 64, 512}) {
      const Kernel k = frozen_weight_kernel(p, m);
      EXPECT_TRUE(kernel_available(k)) << precision_name(p) << " m=" << m << ": " << kernel_name(k);
      EXPECT_NE(k, Kernel::onednn_sgemm) << "a frozen weight always has a rule";
    }
  EXPECT_TRUE(kernel_available(rounded_bf16_kernel()));
}

TEST(DispatchTable, FirstMatchWins) {
  // x W^T at 16 rows matches both the few-rows rule and the 16-32 rule: the first is taken.
  const Kernel k16 = choose_kernel(product(ProductClass::x_wt, Precision::fp32, 16, 512, 512));
  EXPECT_EQ(k16, few_rows_available() ? Kernel::few_rows : Kernel::onednn_matmul);
  // The frozen fp32 weight: one row, the f32 weight through gemm() (gemm_few_rows). On AVX-512:
  // the panels at 2-8 rows of a W of at least 512 x 512, otherwise oneDNN on W in its own layout;
  // elsewhere the panels at 12-48 rows where built, else gemm().
  const bool avx512 = active_isa() == Isa::avx512;
  EXPECT_EQ(frozen_weight_kernel(Precision::fp32, 1), Kernel::f32_weight);
  EXPECT_EQ(frozen_weight_kernel(Precision::fp32, 1, 2048, 512), Kernel::f32_weight);
  for (int64_t m : {2, 3, 4, 8}) {
    EXPECT_EQ(frozen_weight_kernel(Precision::fp32, m), avx512 ? Kernel::onednn_f32 : Kernel::f32_weight) << m;
    EXPECT_EQ(frozen_weight_kernel(Precision::fp32, m, 8000, 128), avx512 ? Kernel::onednn_f32 : Kernel::f32_weight)
        << m << " rows of a model of d_model 128";
    EXPECT_EQ(frozen_weight_kernel(Precision::fp32, m, 512, 2048), avx512 ? Kernel::f32_panels : Kernel::f32_weight)
        << m << " rows of the base model's W_2";
  }
  EXPECT_EQ(frozen_weight_kernel(Precision::fp32, 9, 512, 2048), avx512 ? Kernel::onednn_f32 : Kernel::f32_weight);
  EXPECT_EQ(frozen_weight_kernel(Precision::fp32, 9), avx512 ? Kernel::onednn_f32 : Kernel::f32_weight);
  EXPECT_EQ(frozen_weight_kernel(Precision::fp32, 49), avx512 ? Kernel::onednn_f32 : Kernel::f32_weight);
  EXPECT_EQ(frozen_weight_kernel(Precision::fp32, 11), avx512 ? Kernel::onednn_f32 : Kernel::f32_weight);
  for (int64_t m : {12, 16, 32, 48}) {  // a 16-row block of the output layer among them
    const Kernel k = frozen_weight_kernel(Precision::fp32, m);
    EXPECT_EQ(k, avx512                                 ? Kernel::onednn_f32
                 : kernel_available(Kernel::f32_panels) ? Kernel::f32_panels
                                                        : Kernel::f32_weight) << m << " rows";
  }
  // An attention block below 64^3 multiply-adds runs on the small kernel, above on sgemm.
  EXPECT_EQ(choose_kernel(product(ProductClass::attention_block, Precision::fp32, 64, 64, 63)), Kernel::small_block);
  EXPECT_EQ(choose_kernel(product(ProductClass::attention_block, Precision::fp32, 64, 64, 64)), Kernel::onednn_sgemm);
  // A product no rule names.
  EXPECT_EQ(choose_kernel(product(ProductClass::other, Precision::fp32, 100, 100, 100)), Kernel::onednn_sgemm);
}

TEST(DispatchTable, DescribedOneRuleALineAndQuotedByTheDocs) {
  const std::string marked = describe_dispatch_table(true), plain = describe_dispatch_table(false);
  size_t lines = 0;
  for (char c : plain) lines += c == '\n';
  EXPECT_EQ(lines, dispatch_table().size() + 2) << "a header, one line a rule, the default";
  for (const Rule& r : dispatch_table()) {
    EXPECT_NE(plain.find(r.why), std::string::npos) << r.why;
    EXPECT_NE(marked.find(r.why), std::string::npos) << r.why;
  }
  std::ifstream docs(std::string(ATTN_TEST_DATA) + "/../../docs/performance.md");
  ASSERT_TRUE(docs.good()) << "docs/performance.md";
  std::stringstream text;
  text << docs.rdbuf();
  EXPECT_NE(text.str().find(plain), std::string::npos)
      << "docs/performance.md must quote the table as `attn info --kernels` prints it unmarked:\n" << plain;
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST(DispatchTable, AttnInfoPrintsTheCpuAndTheTable) {
  FILE* pipe = popen((std::string(ATTN_BINARY) + " info --kernels 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << out;
  for (const char* key : {"cpu: ", "kernels: ", "oneDNN: ", "threads: ", "bf16 products: ", "int8 products: "})
    EXPECT_NE(out.find(key), std::string::npos) << key << " missing from:\n" << out;
  for (const Rule& r : dispatch_table()) EXPECT_NE(out.find(r.why), std::string::npos) << r.why;
  EXPECT_NE(out.find("\n*   x W^T"), std::string::npos) << "no rule marked as applying here:\n" << out;
}

}  // namespace
}  // namespace attn
