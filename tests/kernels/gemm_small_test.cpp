// gemm_small (the single-thread kernel of attention's per-block products) against gemm_reference:
// the four transpose combinations, every remainder of the 6-row and 32-column tiles, k = 0,
// alpha and beta, padded leading dimensions, and no write outside the [m, n] corner of C.
#include "attn/kernels/gemm_small.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace attn {
namespace {

std::vector<float> values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>((s >> 40) & 0xffffff) / 8388608.0f - 1.0f;
  }
  return v;
}

// Largest |gemm_small - reference| over C, relative to sum_p |a| |b| + |beta c| of the element;
// counts writes outside C's [m, n] corner in *outside.
double worst_error(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, float beta, int64_t* outside) {
  const int64_t pad = 3;
  const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
  std::vector<float> A = values(static_cast<size_t>((ta ? k : m) * lda), 1 + m);
  std::vector<float> B = values(static_cast<size_t>((tb ? n : k) * ldb), 2 + n);
  std::vector<float> C = values(static_cast<size_t>(m * ldc), 3 + k);
  std::vector<float> R = C;
  gemm_small({ta, tb, m, n, k, alpha, beta, A.data(), lda, B.data(), ldb, C.data(), ldc});
  gemm_reference({ta, tb, m, n, k, alpha, beta, A.data(), lda, B.data(), ldb, R.data(), ldc});
  std::vector<float> before = values(static_cast<size_t>(m * ldc), 3 + k);
  double worst = 0.0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j >= n) {
        *outside += C[at] != before[at];
        continue;
      }
      double scale = std::fabs(beta * before[at]);
      for (int64_t p = 0; p < k; ++p)
        scale += std::fabs(alpha * (ta ? A[p * lda + i] : A[i * lda + p]) * (tb ? B[j * ldb + p] : B[p * ldb + j]));
      worst = std::max(worst, std::fabs(static_cast<double>(C[at]) - R[at]) / std::max(scale, 1e-30));
    }
  }
  return worst;
}

TEST(GemmSmall, MatchesReference) {
  double worst = 0.0;
  int64_t outside = 0, cases = 0;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int64_t m : {1, 5, 6, 7, 8, 10, 11, 12, 13, 32, 33})
        for (int64_t n : {1, 15, 16, 17, 31, 32, 33, 64, 70})
          for (int64_t k : {0, 1, 7, 64, 129})
            for (float beta : {0.0f, 1.0f, -0.5f}) {
              worst = std::max(worst, worst_error(ta, tb, m, n, k, 0.75f, beta, &outside));
              ++cases;
            }
  std::printf("[gemm_small] %ld cases, worst error relative to sum |a b| + |beta c|: %.2e (tolerance 1e-6)\n",
              static_cast<long>(cases), worst);
  EXPECT_LT(worst, 1e-6);
  EXPECT_EQ(outside, 0);
}

TEST(GemmSmall, BetaZeroIgnoresC) {
  // beta == 0 overwrites C without reading it: NaN in C does not leak into the result.
  const int64_t m = 7, n = 20, k = 9;
  std::vector<float> A = values(m * k, 5), B = values(k * n, 6), C(m * n, std::nanf("")), R(m * n, 0.0f);
  gemm_small({false, false, m, n, k, 1.0f, 0.0f, A.data(), k, B.data(), n, C.data(), n});
  gemm_reference({false, false, m, n, k, 1.0f, 0.0f, A.data(), k, B.data(), n, R.data(), n});
  for (int64_t i = 0; i < m * n; ++i) EXPECT_NEAR(C[i], R[i], 1e-5) << i;
}

}  // namespace
}  // namespace attn
