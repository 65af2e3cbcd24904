#include <gtest/gtest.h>

#include <omp.h>

#include <vector>

#include "attn/kernels/denormals.h"
#include "attn/kernels/gemm.h"

namespace attn {
namespace {

float times_one(float x) {
  volatile float one = 1.0f;  // keeps the product from being folded at compile time
  return x * one;
}

TEST(Denormals, FlushedOnTheCallerAndEveryWorker) {
  set_num_threads(2);
  flush_denormals(false);
  EXPECT_FALSE(flushing_denormals());
  EXPECT_EQ(times_one(1e-39f), 1e-39f);  // IEEE: a denormal survives

  flush_denormals(true);
  EXPECT_TRUE(flushing_denormals());
  EXPECT_EQ(times_one(1e-39f), 0.0f);
  EXPECT_EQ(times_one(1e-30f), 1e-30f);  // normal small numbers are untouched
  int flushing = 0;
#pragma omp parallel reduction(+ : flushing)
  flushing += flushing_denormals() ? 1 : 0;
  EXPECT_EQ(flushing, omp_get_max_threads());
}

TEST(Denormals, GemmReadsThemAsZero) {
  flush_denormals(true);
  const int64_t m = 64, n = 32, k = 48;
  std::vector<float> a(m * k), a_zeroed(m * k), b(k * n), c(m * n), c_zeroed(m * n);
  for (int64_t i = 0; i < m * k; ++i) {
    a[i] = i % 3 == 0 ? 1e-39f : 0.01f * static_cast<float>(i % 7);
    a_zeroed[i] = i % 3 == 0 ? 0.0f : a[i];
  }
  for (int64_t i = 0; i < k * n; ++i) b[i] = 0.5f - 0.01f * static_cast<float>(i % 11);
  GemmArgs g;
  g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n, g.c = c.data(),
  g.ldc = n;
  gemm(g);
  g.a = a_zeroed.data(), g.c = c_zeroed.data();
  gemm(g);
  EXPECT_EQ(c, c_zeroed);
}

}  // namespace
}  // namespace attn
