// Micro-benchmark of the fused scaled-dot-product attention (forward, and forward + backward)
// on transformer shapes, in GFLOPS and as a fraction of the fp32 GEMM peak measured in the same
// run. Usage: bench_attention [--threads N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "attn/kernels/gemm.h"
#include "attn/ops/attention.h"
#include "attn/tensor/random.h"

using namespace attn;

namespace {

Tensor random(const Shape& s, uint64_t seed) {
  Tensor t = Tensor::empty(s);
  Rng rng(seed);
  fill_uniform(t, -1.0f, 1.0f, rng);
  return t;
}

// Median-free simple timing: repeats until 0.3 s have passed, returns seconds per call.
template <typename F>
double time_it(F f) {
  f();  // warm-up
  int n = 0;
  auto t0 = std::chrono::steady_clock::now();
  double s = 0;
  do {
    f();
    ++n;
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (s < 0.3);
  return s / n;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
  set_num_threads(threads);
  double peak = measure_gemm_peak_gflops(threads);
  std::printf("threads %d, fp32 GEMM peak %.1f GFLOPS (M=4096 K=512 N=2048, this run)\n\n", threads, peak);
  std::printf("%-34s %10s %10s %8s\n", "shape [batch, heads, len, d_k]", "pass", "GFLOPS", "of peak");
  struct Case { int64_t B, H, T, dk; bool causal; };
  for (Case c : {Case{128, 4, 32, 64, false}, Case{128, 8, 32, 64, true}, Case{32, 8, 64, 64, false},
                 Case{16, 8, 128, 64, true}, Case{4, 8, 256, 64, false}}) {
    Tensor q = random({c.B, c.H, c.T, c.dk}, 1), k = random({c.B, c.H, c.T, c.dk}, 2),
           v = random({c.B, c.H, c.T, c.dk}, 3), dy = random({c.B, c.H, c.T, c.dk}, 4);
    AttentionMask mask{Tensor(), c.causal};
    // QK^T and PV: 2 products of 2*T*T*dk FLOPs each per head (the masked half still computed).
    double fwd_flops = 4.0 * c.B * c.H * c.T * c.T * c.dk;
    double f = time_it([&] { scaled_dot_product_attention(Var(q), Var(k), Var(v), mask); });
    double fb = time_it([&] {
      Var Q(q, true), K(k, true), V(v, true);
      Tape tape;
      TapeScope scope(tape);
      Var y = scaled_dot_product_attention(Q, K, V, mask);
      tape.backward(y, dy);
    });
    char name[64];
    std::snprintf(name, sizeof name, "[%lld, %lld, %lld, %lld]%s", (long long)c.B, (long long)c.H,
                  (long long)c.T, (long long)c.dk, c.causal ? " causal" : "");
    // backward: 4 more products of the same size
    std::printf("%-34s %10s %10.1f %7.0f%%\n", name, "forward", fwd_flops / f / 1e9, 100 * fwd_flops / f / 1e9 / peak);
    std::printf("%-34s %10s %10.1f %7.0f%%\n", "", "fwd+bwd", 3 * fwd_flops / fb / 1e9, 100 * 3 * fwd_flops / fb / 1e9 / peak);
  }
  return 0;
}
