// attn::gemm and friends against the naive gemm_reference: every backend, the four transpose
// combinations, alpha/beta, padded leading dimensions, M=1 / N=1, odd sizes, batches, bf16.
#include "attn/kernels/cpu.h"
#include "attn/kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/gemm_few_rows.h"
#include "gemm_openblas.h"

namespace attn {
namespace {

// Deterministic values in [-1, 1).
std::vector<float> random_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>((s >> 40) & 0xffffff) / 8388608.0f - 1.0f;
  }
  return v;
}

struct Case {
  bool ta, tb;
  int64_t m, n, k;
  float alpha = 1.0f, beta = 0.0f;
  int64_t pad = 0;  // added to every leading dimension
};

std::string describe(const Case& c) {
  char s[160];
  std::snprintf(s, sizeof s, "%c%c m=%lld n=%lld k=%lld alpha=%g beta=%g pad=%lld",
                c.ta ? 'T' : 'N', c.tb ? 'T' : 'N', (long long)c.m, (long long)c.n,
                (long long)c.k, c.alpha, c.beta, (long long)c.pad);
  return s;
}

// The operands of one case: A, B, and C's initial value (NaN when beta == 0, which must not leak).
struct Operands {
  Case c;
  int64_t lda, ldb, ldc;
  std::vector<float> a, b, c0;
  explicit Operands(const Case& cs, uint32_t seed = 1) : c(cs) {
    lda = std::max<int64_t>(cs.ta ? cs.m : cs.k, 1) + cs.pad;
    ldb = std::max<int64_t>(cs.tb ? cs.k : cs.n, 1) + cs.pad;
    ldc = std::max<int64_t>(cs.n, 1) + cs.pad;
    a = random_values((cs.ta ? cs.k : cs.m) * lda + 1, seed);
    b = random_values((cs.tb ? cs.n : cs.k) * ldb + 1, seed + 1);
    c0 = random_values(cs.m * ldc + 1, seed + 2);
    if (cs.beta == 0.0f) c0.assign(c0.size(), std::numeric_limits<float>::quiet_NaN());
  }
  GemmArgs args(float* out) const {
    return {c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, a.data(), lda, b.data(), ldb, out, ldc};
  }
  std::vector<float> reference() const {
    std::vector<float> out = c0;
    gemm_reference(args(out.data()));
    return out;
  }
};

// Max |x - y| over the m x n block (ld apart); NaN counts as infinitely far.
double max_abs_diff(const std::vector<float>& x, const std::vector<float>& y, int64_t m, int64_t n,
                    int64_t ld) {
  double worst = 0.0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double d = std::fabs(static_cast<double>(x[i * ld + j]) - y[i * ld + j]);
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
  return worst;
}

// f32 accumulation error of k terms in [-1, 1], with alpha, beta up to 2: well above what a
// correct kernel does (printed below) and far below a single missing or wrong term.
double f32_tolerance(const Case& c) { return 2e-6 * (c.k + 1); }

// A way to compute the product: gemm() with a backend, or one of the OpenBLAS comparisons.
struct Runner {
  std::string name;
  std::function<void(const GemmArgs&)> run;
};

// A kernel forced; none: the dispatch table's plan (gemm(g)).
Runner with_kernel(std::optional<Kernel> k) {
  if (!k) return {"automatic", [](const GemmArgs& g) { gemm(g); }};
  return {kernel_name(*k), [k](const GemmArgs& g) { gemm(g, *k); }};
}

const Runner kOpenblas{"openblas_sgemm", [](const GemmArgs& g) { gemm_openblas(g, 2); }};
const Runner kGemvOpenblas{"openblas_sgemv", [](const GemmArgs& g) { gemv_openblas(g, 2); }};
const Runner kGemvSplit{"openblas_gemv_split", [](const GemmArgs& g) { gemv_openblas_split(g); }};

void expect_matches_reference(const Case& c, const Runner& runner) {
  const Operands op(c);
  std::vector<float> out = op.c0;
  runner.run(op.args(out.data()));
  const double diff = max_abs_diff(out, op.reference(), c.m, c.n, op.ldc);
  const double tol = f32_tolerance(c);
  std::printf("  %-19s %-50s max|diff| %.3g (tol %.3g)\n", runner.name.c_str(),
              describe(c).c_str(), diff, tol);
  EXPECT_LE(diff, tol) << runner.name << " " << describe(c);
  // Padding between rows is never written.
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < op.ldc && i * op.ldc + j < static_cast<int64_t>(out.size()); ++j)
      ASSERT_TRUE(std::isnan(op.c0[i * op.ldc + j]) ? std::isnan(out[i * op.ldc + j])
                                                    : out[i * op.ldc + j] == op.c0[i * op.ldc + j])
          << "padding of C written at row " << i << " column " << j << " by " << runner.name
          << " " << describe(c);
}

std::vector<Case> general_cases() {
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ta, tb, 37, 29, 53});
      cases.push_back({ta, tb, 37, 29, 53, 1.5f, -0.5f, 7});
      cases.push_back({ta, tb, 130, 257, 300, -0.75f, 2.0f, 3});
      cases.push_back({ta, tb, 2, 3, 1, 1.0f, 1.0f, 1});
      cases.push_back({ta, tb, 24, 300, 70, 1.0f, 0.5f, 2});  // NT: the matmul primitive
    }
  return cases;
}

std::vector<Case> vector_cases() {  // M == 1 or N == 1
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ta, tb, 1, 300, 70});
      cases.push_back({ta, tb, 1, 1000, 200, 1.5f, -0.5f, 5});  // large enough to split
      cases.push_back({ta, tb, 77, 1, 90, -1.0f, 0.5f, 2});
      cases.push_back({ta, tb, 2000, 1, 100});  // split over rows, C strided
      cases.push_back({ta, tb, 1, 1, 33, 2.0f, 1.0f, 4});
    }
  return cases;
}

TEST(Gemm, GeneralShapesEveryBackend) {
  for (const Case& c : general_cases())
    for (const Runner& r : {with_kernel(std::nullopt), with_kernel(Kernel::onednn_sgemm),
                            with_kernel(Kernel::onednn_matmul), kOpenblas})
      expect_matches_reference(c, r);
}

TEST(Gemm, VectorShapesEveryBackend) {
  for (const Case& c : vector_cases())
    for (const Runner& r : {with_kernel(std::nullopt), with_kernel(Kernel::onednn_sgemm),
                            with_kernel(Kernel::onednn_matmul), kOpenblas, kGemvOpenblas,
                            kGemvSplit})
      expect_matches_reference(c, r);
}

// x W^T for few rows with W read in place: every tile shape (1-4 rows of A against 1-8 rows of
// W), k tails (k not a multiple of the vector width), row strides, alpha and beta.
TEST(Gemm, FewRowsKernel) {
  if (!few_rows_available()) GTEST_SKIP() << "built without AVX-512 or AVX2 + FMA";
  const Runner few{"few_rows", [](const GemmArgs& g) { gemm(g, Kernel::few_rows); }};
  int variant = 0;
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17})
    for (int64_t n : {1, 9, 37, 300})
      for (int64_t k : {1, 7, 16, 17, 64, 513}) {
        const float alphas[] = {1.0f, -0.5f, 2.0f}, betas[] = {0.0f, 1.0f, -0.75f};
        expect_matches_reference({false, true, m, n, k, alphas[variant % 3], betas[variant / 3 % 3], variant % 4},
                                 few);
        ++variant;
      }
  expect_matches_reference({false, true, 4, 2000, 512, 1.0f, 0.5f, 3}, few);  // split among threads
}

// A row's output does not depend on how many rows come with it (the tiles differ, each dot
// product's order does not): a beam of 4 or 8 gives each hypothesis the bits it has alone.
TEST(Gemm, FewRowsSameBitsWhateverM) {
  if (!few_rows_available()) GTEST_SKIP() << "built without AVX-512 or AVX2 + FMA";
  const int64_t n = 300, k = 200;
  const std::vector<float> a = random_values(8 * k, 5), w = random_values(n * k, 6);
  std::vector<float> all(8 * n);
  gemm({false, true, 8, n, k, 1.0f, 0.0f, a.data(), k, w.data(), k, all.data(), n}, Kernel::few_rows);
  for (int64_t m : {1, 3, 5, 8})
    for (int64_t i = 0; i < m; ++i) {
      std::vector<float> out(m * n);
      gemm({false, true, m, n, k, 1.0f, 0.0f, a.data(), k, w.data(), k, out.data(), n}, Kernel::few_rows);
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(out[i * n + j], all[i * n + j]) << "m=" << m << " row " << i << " col " << j;
    }
}

TEST(Gemm, DispatchRules) {
  if (few_rows_available()) {
    EXPECT_EQ(plan_gemm({false, true, 1, 512, 512}).kernel, Kernel::few_rows);
    EXPECT_EQ(plan_gemm({false, true, 16, 8000, 512}).kernel, Kernel::few_rows);
  }
  EXPECT_EQ(plan_gemm({false, true, 17, 8000, 512}).kernel, Kernel::onednn_matmul);
  EXPECT_EQ(plan_gemm({false, false, 1, 512, 512}).kernel, Kernel::onednn_sgemm);
  EXPECT_EQ(plan_gemm({false, true, 4096, 2048, 512}).kernel, Kernel::onednn_sgemm);
  EXPECT_EQ(plan_gemm({false, true, 32, 8000, 512}).kernel, Kernel::onednn_matmul);
  EXPECT_EQ(plan_gemm({false, false, 32, 8000, 512}).kernel, Kernel::onednn_sgemm);
  // weight gradients dW = dY^T X over a training batch: the matmul primitive, but for N >= 2048
  EXPECT_EQ(plan_gemm({true, false, 2048, 512, 4096}).kernel, Kernel::onednn_matmul);
  EXPECT_EQ(plan_gemm({true, false, 512, 2048, 4096}).kernel, Kernel::onednn_sgemm);
  EXPECT_EQ(plan_gemm({true, false, 2048, 512, 512}).kernel, Kernel::onednn_sgemm);
  // with real leading dimensions: rows of d_ff = 1024 floats are 4 KB apart
  const GemmArgs ffn2_forward{false, true, 4096, 256, 1024, 1, 0, nullptr, 1024, nullptr, 1024, nullptr, 256};
  const GemmArgs ffn2_weight_grad{true, false, 256, 1024, 4096, 1, 0, nullptr, 256, nullptr, 1024, nullptr, 1024};
  const GemmArgs ffn1_weight_grad{true, false, 1024, 256, 4096, 1, 0, nullptr, 1024, nullptr, 256, nullptr, 256};
  EXPECT_EQ(plan_gemm(ffn1_weight_grad).kernel, Kernel::onednn_matmul);
  EXPECT_EQ(plan_gemm(ffn2_weight_grad).kernel, Kernel::onednn_matmul);  // on a copy of H, rows 64 bytes longer
  if (active_isa() == Isa::avx512) {
    EXPECT_EQ(plan_gemm(ffn2_forward).kernel, Kernel::onednn_matmul);
    EXPECT_EQ(plan_gemm({false, true, 4096, 256, 1040, 1, 0, nullptr, 1040, nullptr, 1040, nullptr, 256}).kernel,
              Kernel::onednn_sgemm);  // rows not aliased: dnnl_sgemm
    EXPECT_EQ(plan_gemm({false, true, 128, 8000, 512}).kernel, Kernel::onednn_matmul);  // 33-512 rows
    EXPECT_EQ(plan_gemm({false, true, 513, 8000, 512}).kernel, Kernel::onednn_sgemm);
  } else {
    EXPECT_EQ(plan_gemm(ffn2_forward).kernel, Kernel::onednn_sgemm);
  }
  EXPECT_EQ(plan_batched({false, true, 32, 32, 64}, 256).kernel, Kernel::batched_matmul);
  EXPECT_EQ(plan_batched({false, true, 1, 128, 64}, 256).kernel, Kernel::omp_over_batch);
}

// Weight gradients whose operand rows are a multiple of 4 KB apart (A^T B over K >= 1024 rows,
// lda or ldb 1024 floats), or A's rows 2 KB apart: gemm() may copy them to longer rows first;
// the product is the same. The pad makes lda = ldb = 1024 with m = 256 + 768.
TEST(Gemm, WeightGradientsOverAliasedRows) {
  const Runner automatic{"gemm()", [](const GemmArgs& g) { gemm(g); }};
  expect_matches_reference({true, false, 256, 256, 1024, 1.0f, 0.0f, 768}, automatic);
  expect_matches_reference({true, false, 1024, 300, 1100, 0.5f, 1.0f, 0}, automatic);  // lda 1024 only
  expect_matches_reference({true, false, 512, 272, 1040, 1.0f, 0.5f, 0}, automatic);   // lda 512
}

TEST(Gemm, EmptyAndZeroK) {
  for (const Runner& r : {with_kernel(std::nullopt), with_kernel(Kernel::onednn_sgemm),
                          with_kernel(Kernel::onednn_matmul), kOpenblas})
    expect_matches_reference({false, false, 5, 6, 0, 1.0f, 0.5f, 1}, r);
  for (const Runner& r : {with_kernel(std::nullopt), kGemvSplit})
    expect_matches_reference({false, true, 1, 3, 0, 1.0f, 0.0f}, r);  // C = 0 over the NaNs
  float c = 3.0f;
  gemm({false, false, 0, 1, 5, 1.0f, 0.0f, nullptr, 5, nullptr, 1, &c, 1});  // m = 0: no-op
  EXPECT_EQ(c, 3.0f);
}

// Bit for bit, run after run (the thread count is fixed within this process).
TEST(Gemm, DeterministicForFixedThreads) {
  for (const Case& c : {Case{false, true, 200, 300, 400, 1.0f, 0.5f}, Case{false, false, 1, 3000, 512},
                        Case{true, false, 3000, 1, 512}, Case{false, true, 24, 3000, 512}}) {
    const Operands op(c);
    std::vector<float> first = op.c0, second = op.c0;
    gemm(op.args(first.data()));
    gemm(op.args(second.data()));
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0)
        << describe(c);
  }
  // Batched (one matmul primitive) and bf16 likewise.
  const Operands op({false, true, 64 * 32, 32, 64});  // 64 items of [32, 64] x [64, 32]
  std::vector<float> first = op.c0, second = op.c0, third = op.c0, fourth = op.c0;
  GemmArgs g{false, true, 32, 32, 64, 1.0f, 0.0f, op.a.data(), 64, op.b.data(), 64, nullptr, 32};
  g.c = first.data();
  gemm_batched(g, 64, 32 * 64, 0, 32 * 32);
  g.c = second.data();
  gemm_batched(g, 64, 32 * 64, 0, 32 * 32);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
  gemm_bf16(op.args(third.data()));
  gemm_bf16(op.args(fourth.data()));
  EXPECT_EQ(std::memcmp(third.data(), fourth.data(), third.size() * sizeof(float)), 0);
}

TEST(Gemm, BadArgumentsNameTheField) {
  float a[4] = {}, b[4] = {}, c[4] = {};
  try {
    gemm({false, false, 2, 2, 2, 1.0f, 0.0f, a, 1, b, 2, c, 2});
    FAIL() << "lda=1 for k=2 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lda=1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gemm({false, false, 2, 2, 2, 1.0f, 0.0f, a, 2, b, 2, c, 1}), Error);   // ldc < n
  EXPECT_THROW(gemm({false, false, 2, 2, 2, 1.0f, 0.0f, a, 2, b, 2, nullptr, 2}), Error);
  EXPECT_THROW(gemv_openblas_split({false, false, 2, 2, 2, 1.0f, 0.0f, a, 2, b, 2, c, 2}),
               Error);  // a gemv needs m == 1 or n == 1
  EXPECT_THROW(gemm({false, false, -1, 2, 2, 1.0f, 0.0f, a, 2, b, 2, c, 2}), Error);
}

TEST(Gemm, ThreadCount) {
  const int before = num_threads();
  EXPECT_GE(before, 1);
  set_num_threads(1);
  EXPECT_EQ(num_threads(), 1);
  expect_matches_reference({false, false, 64, 65, 66}, with_kernel(std::nullopt));
  expect_matches_reference({false, false, 1, 4000, 66}, with_kernel(std::nullopt));
  set_num_threads(before);
  EXPECT_EQ(num_threads(), before);
  EXPECT_THROW(set_num_threads(0), Error);
}

// ---- batched ----

// A way to run a batch: gemm_batched with the table's plan (automatic) or a kernel forced, or the
// OpenBLAS comparison.
struct BatchedRunner {
  std::string name;
  std::function<void(const GemmArgs&, int64_t, int64_t, int64_t, int64_t)> run;
};

BatchedRunner batched_with(std::optional<Kernel> k) {
  if (!k) return {"automatic", [](const GemmArgs& g, int64_t n, int64_t sa, int64_t sb, int64_t sc) {
                    gemm_batched(g, n, sa, sb, sc);
                  }};
  return {kernel_name(*k), [k](const GemmArgs& g, int64_t n, int64_t sa, int64_t sb, int64_t sc) {
            gemm_batched(g, n, sa, sb, sc, *k);
          }};
}

const BatchedRunner kBatchedOpenblas{"omp_over_batch+openblas", gemm_batched_openblas};

void expect_batched_matches(const Case& c, int64_t batch, bool broadcast_b, const BatchedRunner& runner) {
  const int64_t rows_a = c.ta ? c.k : c.m, rows_b = c.tb ? c.n : c.k;
  const int64_t lda = (c.ta ? c.m : c.k) + c.pad, ldb = (c.tb ? c.k : c.n) + c.pad,
                ldc = c.n + c.pad;
  const int64_t sa = rows_a * lda + 3, sb = broadcast_b ? 0 : rows_b * ldb + 5, sc = c.m * ldc + 2;
  const std::vector<float> a = random_values(batch * sa, 11);
  const std::vector<float> b = random_values(broadcast_b ? rows_b * ldb : batch * sb, 12);
  std::vector<float> out = random_values(batch * sc, 13), want = out;
  GemmArgs g{c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, a.data(), lda, b.data(), ldb, out.data(), ldc};
  runner.run(g, batch, sa, sb, sc);
  g.c = want.data();
  gemm_batched(g, batch, sa, sb, sc, Kernel::reference);
  const double diff = max_abs_diff(out, want, 1, static_cast<int64_t>(out.size()), 0);
  const double tol = f32_tolerance(c);
  const char* name = runner.name.c_str();
  std::printf("  %-24s batch=%-4lld%s %-44s max|diff| %.3g (tol %.3g)\n", name, (long long)batch,
              broadcast_b ? " B shared" : "", describe(c).c_str(), diff, tol);
  EXPECT_LE(diff, tol) << name << " " << describe(c);
}

TEST(Gemm, BatchedEveryBackend) {
  for (const BatchedRunner& be : {batched_with(std::nullopt), batched_with(Kernel::omp_over_batch),
                                  batched_with(Kernel::batched_matmul), kBatchedOpenblas}) {
    expect_batched_matches({false, true, 32, 32, 64, 0.125f}, 64, false, be);  // Q K^T / sqrt(d_k)
    expect_batched_matches({false, false, 32, 64, 32}, 64, false, be);         // P V
    expect_batched_matches({true, false, 17, 33, 40, 1.5f, -0.5f, 3}, 7, false, be);
    expect_batched_matches({false, false, 5, 9, 11, 1.0f, 1.0f, 2}, 9, true, be);
    expect_batched_matches({false, true, 1, 40, 64}, 5, false, be);  // one decoding step
  }
}

// ---- bf16 ----

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3f80);         // tie -> even (down)
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);     // tie -> even (up)
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f + 0x1p-12f), 0x3f81);  // above the tie -> up
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  EXPECT_EQ(bf16_to_float(float_to_bf16(INFINITY)), INFINITY);
  EXPECT_EQ(bf16_to_float(0x3fc0), 1.5f);
}

// gemm_bf16 on f32 inputs equals gemm_reference on the bf16-rounded inputs up to f32 accumulation
// (products of bf16 values are exact), and the f32 product up to the rounding of the inputs:
// each |a b| is off by at most ~2^-8 |a b|, so |diff| <= 2^-8 * |alpha| * max_ij sum_p |a_ip b_pj|.
void expect_bf16_matches(const Case& c) {
  const Operands op(c);
  std::vector<float> out = op.c0;
  gemm_bf16(op.args(out.data()));

  Operands rounded = op;
  for (auto& x : rounded.a) x = bf16_to_float(float_to_bf16(x));
  for (auto& x : rounded.b) x = bf16_to_float(float_to_bf16(x));
  const double diff_rounded = max_abs_diff(out, rounded.reference(), c.m, c.n, op.ldc);
  const double tol_rounded = f32_tolerance(c);

  Operands magnitudes = op;  // sum_p |a_ip b_pj| from the reference on |A|, |B|
  for (auto& x : magnitudes.a) x = std::fabs(x);
  for (auto& x : magnitudes.b) x = std::fabs(x);
  magnitudes.c.alpha = 1.0f, magnitudes.c.beta = 0.0f;
  const std::vector<float> sums = magnitudes.reference();
  const double bound = 0x1p-8 * std::fabs(c.alpha) *
                       max_abs_diff(sums, std::vector<float>(sums.size(), 0.0f), c.m, c.n, op.ldc);
  const double diff_f32 = max_abs_diff(out, op.reference(), c.m, c.n, op.ldc);
  const double tol_f32 = bound + tol_rounded;
  std::printf("  bf16 %-50s vs rounded-input ref %.3g (tol %.3g), vs f32 ref %.3g (tol %.3g)\n",
              describe(c).c_str(), diff_rounded, tol_rounded, diff_f32, tol_f32);
  EXPECT_LE(diff_rounded, tol_rounded) << describe(c);
  EXPECT_LE(diff_f32, tol_f32) << describe(c);
}

TEST(Bf16, GemmMatchesReference) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      expect_bf16_matches({ta, tb, 37, 29, 53});
      expect_bf16_matches({ta, tb, 64, 130, 256, 1.5f, -0.5f, 7});
      expect_bf16_matches({ta, tb, 1, 200, 64, 1.0f, 1.0f, 1});
      expect_bf16_matches({ta, tb, 300, 40, 33, 1.5f, -0.5f, 7});  // 256 rows, then 44 (onednn_rows.h)
    }
  expect_bf16_matches({false, false, 3, 4, 0, 1.0f, 0.5f});
  // where oneDNN has no bf16 matmul, the widened operands take attn::gemm's dispatch: few rows
  // (gemm_few_rows), and a weight gradient whose rows are 4 KB apart (widened into longer rows)
  expect_bf16_matches({false, true, 5, 48, 80, 1.0f, 0.0f, 3});
  expect_bf16_matches({true, false, 64, 1024, 1024, 1.0f, 1.0f});
}

TEST(Bf16, Bf16BuffersEqualF32Form) {
  const Case c{false, true, 45, 70, 96, 0.5f, 0.25f, 3};
  const Operands op(c);
  std::vector<uint16_t> a16(op.a.size()), b16(op.b.size());
  round_to_bf16(op.a.data(), a16.data(), static_cast<int64_t>(a16.size()));
  round_to_bf16(op.b.data(), b16.data(), static_cast<int64_t>(b16.size()));
  std::vector<float> from_f32 = op.c0, from_bf16 = op.c0;
  gemm_bf16(op.args(from_f32.data()));
  gemm_bf16(GemmBf16Args{c.ta, c.tb, c.m, c.n, c.k, c.alpha, c.beta, a16.data(), op.lda,
                         b16.data(), op.ldb, from_bf16.data(), op.ldc});
  const double diff = max_abs_diff(from_f32, from_bf16, c.m, c.n, op.ldc);
  std::printf("  bf16 buffers vs f32 form: max|diff| %.3g (tol 1e-6)\n", diff);
  EXPECT_LE(diff, 1e-6);
}

// A bias given to gemm_bf16 (added in the matmul's epilogue, or, where oneDNN has no bf16 matmul,
// put in C first) gives what C holding the bias and beta 1 gives, to the last bit or two: one f32
// addition either way, but where oneDNN's kernel adds its blocks of k into C one by one (as it did
// for m = 1 once an earlier primitive of that shape had been made in the process), the bias joins
// the sum at another point.
TEST(Bf16, BiasInTheEpilogueEqualsBiasInC) {
  for (const Case& c : {Case{false, true, 37, 29, 53}, Case{false, true, 300, 40, 33, 1.0f, 0.0f, 7},
                        Case{true, false, 64, 130, 256}, Case{false, false, 1, 200, 64}, Case{false, true, 5, 48, 0}}) {
    const Operands op(c);
    std::vector<uint16_t> a16(op.a.size()), b16(op.b.size());
    round_to_bf16(op.a.data(), a16.data(), static_cast<int64_t>(a16.size()));
    round_to_bf16(op.b.data(), b16.data(), static_cast<int64_t>(b16.size()));
    const std::vector<float> bias = random_values(c.n, 9);
    std::vector<float> in_epilogue = op.c0, in_c = op.c0;  // NaN: beta 0 must not read C
    for (int64_t i = 0; i < c.m; ++i) std::copy(bias.begin(), bias.end(), in_c.begin() + i * op.ldc);
    GemmBf16Args g{c.ta, c.tb, c.m, c.n, c.k, 1.0f, 0.0f, a16.data(), op.lda, b16.data(), op.ldb,
                   in_epilogue.data(), op.ldc, bias.data()};
    gemm_bf16(g);
    g.beta = 1.0f, g.c = in_c.data(), g.bias = nullptr;
    gemm_bf16(g);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j)
        ASSERT_NEAR(in_epilogue[i * op.ldc + j], in_c[i * op.ldc + j], 0x1p-22 * (1.0 + std::fabs(in_c[i * op.ldc + j])))
            << describe(c) << " at " << i << ", " << j;
  }
  std::vector<float> c(4, 0.0f), bias(2, 1.0f);
  std::vector<uint16_t> a(4, 0x3f80);
  GemmBf16Args g{false, false, 2, 2, 2, 1.0f, 0.5f, a.data(), 2, a.data(), 2, c.data(), 2, bias.data()};
  EXPECT_THROW(gemm_bf16(g), Error);  // a bias with beta != 0
}

TEST(Gemm, PeakMeasurementIsPositive) {
  const double peak = measure_gemm_peak_gflops(num_threads());
  std::printf("  GEMM peak (M=4096 K=512 N=2048, %d threads): %.1f GFLOPS\n", num_threads(), peak);
  EXPECT_GT(peak, 1.0);
}

}  // namespace
}  // namespace attn
