// bench_gemm_int8: the int8 product gemm_packed at decoding sizes (m = 1..32 rows) with each
// kernel, oneDNN's matmul and attn's VNNI kernel (include/attn/kernels/gemm_s8_gemv.h), on the
// base Transformer's weight shapes. Prints one line per (shape, m, kernel): microseconds per call
// in wall and process CPU time, and the weight bytes read per wall second.
//   bench_gemm_int8 [--threads N] [--seconds S] [--m 1,2,4,...]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_s8_gemv.h"

namespace {

using attn::Kernel;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Timing {
  double wall_us = 0, cpu_us = 0;
};

// Calls `g` on `w` for about `seconds` of wall time (after a warm-up call): time per call.
Timing time_calls(const attn::PackedGemmArgs& g, const attn::PackedWeight& w, double seconds) {
  attn::gemm_packed(g, w);
  int64_t calls = 0;
  const double w0 = wall_now(), c0 = cpu_now();
  double w1 = w0;
  while (w1 - w0 < seconds) {
    for (int r = 0; r < 10; ++r) attn::gemm_packed(g, w);
    calls += 10;
    w1 = wall_now();
  }
  return {1e6 * (w1 - w0) / calls, 1e6 * (cpu_now() - c0) / calls};
}

std::vector<int64_t> parse_list(const char* s) {
  std::vector<int64_t> out;
  for (const char* p = s; *p;) {
    out.push_back(std::strtoll(p, const_cast<char**>(&p), 10));
    if (*p == ',') ++p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  double seconds = 0.2;
  std::vector<int64_t> ms = {1, 2, 4, 8, 12, 16, 24, 32};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (a == "--m") ms = parse_list(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_gemm_int8 [--threads N] [--seconds S] [--m 1,2,4]\n");
      return 2;
    }
  }
  omp_set_num_threads(threads);
  const int64_t shapes[][2] = {{512, 512}, {2048, 512}, {512, 2048}, {8000, 512}};  // [n, k]
  std::printf("threads %d, vnni kernel %s\n", threads, attn::s8_gemv_available() ? "built" : "missing");
  std::printf("%6s %6s %4s %7s %10s %10s %8s\n", "n", "k", "m", "kernel", "wall_us", "cpu_us", "GB/s");
  for (const auto& nk : shapes) {
    const int64_t n = nk[0], k = nk[1];
    std::vector<float> w(n * k);
    for (int64_t i = 0; i < n * k; ++i) w[i] = static_cast<float>((i * 7919) % 201 - 100) / 100.0f;
    auto packed = attn::pack_weight(attn::Precision::int8, w.data(), n, k, k);
    for (int64_t m : ms) {
      std::vector<float> x(m * k, 0.5f), y(m * n, 0.0f);
      for (Kernel kernel : {Kernel::onednn_s8, Kernel::s8_rows}) {
        if (kernel == Kernel::s8_rows && !attn::s8_gemv_available()) continue;
        const Timing t = time_calls({m, x.data(), k, 1.0f, y.data(), n, kernel}, *packed, seconds);
        std::printf("%6lld %6lld %4lld %7s %10.2f %10.2f %8.2f\n", static_cast<long long>(n),
                    static_cast<long long>(k), static_cast<long long>(m),
                    kernel == Kernel::s8_rows ? "vnni" : "onednn", t.wall_us, t.cpu_us,
                    1e-3 * static_cast<double>(n * k) / t.wall_us);
      }
    }
  }
  return 0;
}
