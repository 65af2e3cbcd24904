// Comparison helpers of the RNN tests: max |diff| against a tolerance, printed and asserted.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "attn/io/safetensors.h"

namespace attn::testing {

inline std::map<std::string, Tensor> load_rnn_fixture(const std::string& name) {
  return io::load_safetensors(std::string(ATTN_TEST_DATA) + "/rnn/" + name + ".safetensors");
}

// |a - b| <= tol * (1 + |b|) everywhere; prints max |diff|. Returns max |diff|.
inline double expect_close(const std::string& what, const Tensor& a, const Tensor& b, double tol) {
  EXPECT_EQ(shape_str(a.shape()), shape_str(b.shape())) << what;
  if (a.shape() != b.shape()) return INFINITY;
  std::vector<float> x = a.to_vector(), y = b.to_vector();
  double worst = 0, max_diff = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = std::fabs(static_cast<double>(x[i]) - y[i]);
    max_diff = std::max(max_diff, d);
    worst = std::max(worst, d / (tol * (1.0 + std::fabs(y[i]))));
  }
  std::printf("[torch] %-44s max|diff| %.2e (tolerance %.0e (1 + |torch|)) %s\n", what.c_str(), max_diff, tol,
              worst <= 1.0 ? "ok" : "FAIL");
  EXPECT_LE(worst, 1.0) << what << ": max |diff| " << max_diff << " beyond " << tol << " * (1 + |torch|)";
  return max_diff;
}

}  // namespace attn::testing
