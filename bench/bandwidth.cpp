// bench_bandwidth: the machine's memory bandwidth, the limit of decoding at batch 1 (every weight
// streams from memory once per step). STREAM's triad, a[i] = b[i] + s c[i], over three float
// arrays far larger than the last-level cache, on --threads threads (each touches, first and
// every time, the same static share, so its pages sit near it). Counted as STREAM counts it:
// 12 bytes per element (two reads, one write; the write-allocate read the cache may add is not
// counted). The best of --repeat passes. Also the rate of reading alone, the pattern of decoding
// at batch 1 (weights read, nothing written): s += b[i] + c[i] over the same arrays, 8 bytes per
// element. On a Zen 5 VM (2026-11-27) reading came out at 0.95-1.09x the triad in the 8 runs
// measured, at 30-50 GB/s as the VM's bandwidth moved.
// Prints one JSON line:
//   {"triad_gb_s", "read_gb_s", "threads", "mib_per_array", "repeat"}
//   bench_bandwidth [--threads N] [--mib M] [--repeat R]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// One triad pass over n elements: seconds.
double triad(float* a, const float* b, const float* c, int64_t n, float s) {
  const double t0 = now();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
  return now() - t0;
}

// One pass reading b and c: seconds; *sum their elements' sum (so that the reads are not dropped).
double read_only(const float* b, const float* c, int64_t n, double* sum) {
  const double t0 = now();
  float s = 0.0f;
#pragma omp parallel for simd schedule(static) reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += b[i] + c[i];
  const double seconds = now() - t0;
  *sum = s;
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, repeat = 10;
  int64_t mib = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--mib") mib = std::atoll(argv[i + 1]);
    else if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_bandwidth [--threads N] [--mib M] [--repeat R]\n");
      return 2;
    }
  }
  if (threads < 1 || mib < 1 || repeat < 1) {
    std::fprintf(stderr, "bench_bandwidth: --threads, --mib and --repeat must be at least 1\n");
    return 2;
  }
  omp_set_num_threads(threads);
  const int64_t n = mib * (1 << 20) / static_cast<int64_t>(sizeof(float));
  auto a = std::make_unique<float[]>(static_cast<size_t>(n));
  auto b = std::make_unique<float[]>(static_cast<size_t>(n));
  auto c = std::make_unique<float[]>(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  triad(a.get(), b.get(), c.get(), n, 3.0f);  // warm-up
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) best = std::min(best, triad(a.get(), b.get(), c.get(), n, 3.0f));
  // a[i] must be 1 + 3 * 2 everywhere, or the loop did not run as written
  for (int64_t i = 0; i < n; i += 4099)
    if (a[i] != 7.0f) {
      std::fprintf(stderr, "bench_bandwidth: wrong triad result at %lld\n", static_cast<long long>(i));
      return 1;
    }
  double sum = 0.0, best_read = 1e30;
  read_only(b.get(), c.get(), n, &sum);  // warm-up
  for (int r = 0; r < repeat; ++r) best_read = std::min(best_read, read_only(b.get(), c.get(), n, &sum));
  if (!(sum > 0.0)) {  // 3 per element, rounded: positive unless the loop did not run
    std::fprintf(stderr, "bench_bandwidth: wrong read-only sum %g\n", sum);
    return 1;
  }
  const double bytes = 3.0 * static_cast<double>(n) * sizeof(float), read_bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  std::printf("{\"triad_gb_s\": %.2f, \"read_gb_s\": %.2f, \"threads\": %d, \"mib_per_array\": %lld, \"repeat\": %d}\n",
              bytes / best / 1e9, read_bytes / best_read / 1e9, threads, static_cast<long long>(mib), repeat);
  return 0;
}
