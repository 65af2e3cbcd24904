// measure_gemm_peak_gflops: the "GEMM peak" other benchmarks report fractions of, measured in
// the same run on the same machine (gemm() on M=4096, K=512, N=2048, fp32).
#include <algorithm>
#include <chrono>
#include <vector>

#include "attn/kernels/gemm.h"

namespace attn {

double measure_gemm_peak_gflops(int threads) {
  const int previous = num_threads();
  set_num_threads(threads);
  std::vector<float> a(kPeakM * kPeakK), b(kPeakK * kPeakN), c(kPeakM * kPeakN);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) * 0.125f - 0.75f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  const GemmArgs g{false, false, kPeakM, kPeakN, kPeakK, 1.0f, 0.0f,
                   a.data(), kPeakK, b.data(), kPeakN, c.data(), kPeakN};
  gemm(g);  // warm-up: page faults, oneDNN's first-call setup
  using clock = std::chrono::steady_clock;
  const double flops = 2.0 * kPeakM * kPeakN * kPeakK;
  double best = 0.0;
  // Five rounds of ~0.1 s; the best round is the least disturbed by anything else running.
  for (int round = 0; round < 5; ++round) {
    const auto start = clock::now();
    int reps = 0;
    double seconds = 0.0;
    do {
      gemm(g);
      ++reps;
      seconds = std::chrono::duration<double>(clock::now() - start).count();
    } while (seconds < 0.1);
    best = std::max(best, flops * reps / seconds * 1e-9);
  }
  set_num_threads(previous);
  return best;
}

}  // namespace attn
