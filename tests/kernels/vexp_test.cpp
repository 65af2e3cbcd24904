// The vectorised exp loops (kernels/vexp.h) against std::exp in double: relative error, the
// masked -inf scores (exact zeros), overflow, and every tail length of the 16-lane loop.
#include "attn/kernels/vexp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace attn {
namespace {

TEST(VExp, MatchesStdExp) {
  std::vector<float> x;
  for (float v = -87.0f; v <= 88.0f; v += 0.0137f) x.push_back(v);
  std::vector<float> y(x.size());
  exp_affine(x.data(), y.data(), static_cast<int64_t>(x.size()), 0.0f, 1.0f, 0.0f, false);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::fabs(y[i] - ref) / ref);
  }
  std::printf("exp on [-87, 88]: max relative error %.2e (tolerance 5e-7)\n", worst);
  EXPECT_LE(worst, 5e-7);
}

TEST(VExp, MaskedOverflowAndTails) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-inf, -1000.0f, -88.0f, 0.0f, 100.0f};
  std::vector<float> y(x.size());
  exp_shifted(x.data(), y.data(), static_cast<int64_t>(x.size()), 0.0f);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[3], 1.0f);
  EXPECT_EQ(y[4], inf);
  for (int64_t n = 0; n <= 40; ++n) {  // every tail of the 16-lane loop
    std::vector<float> v(static_cast<size_t>(n));
    double ref = 0;
    float mx = -inf;
    for (int64_t i = 0; i < n; ++i) {
      v[i] = 0.37f * static_cast<float>(i % 7) - 1.0f;
      ref += std::exp(static_cast<double>(v[i]) - 0.5);
      mx = std::max(mx, v[i]);
    }
    double s = sum_exp(v.data(), n, 0.5f);
    EXPECT_NEAR(s, ref, 1e-6 * std::max(1.0, ref)) << "n = " << n;
    EXPECT_EQ(max_of(v.data(), n), mx) << "n = " << n;
    std::vector<float> acc(static_cast<size_t>(n), 1.0f);
    exp_affine(v.data(), acc.data(), n, 0.5f, 2.0f, -0.25f, true);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(acc[i], 1.0 + 2.0 * std::exp(static_cast<double>(v[i]) - 0.5) - 0.25, 1e-6);
  }
}

}  // namespace
}  // namespace attn
