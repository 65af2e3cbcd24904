// bench_gemm: GFLOPS of every GEMM backend on the Transformer's shapes, the backend gemm()
// dispatches to, and each figure as a fraction of the "GEMM peak" (the best fp32 figure on
// M=4096, K=512, N=2048). Also bf16, batched attention products, and whether a BLAS call slows
// the OpenMP loop that follows it.
//   bench_gemm [--threads N] [--seconds S]   (S: time per figure, default 0.3)
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "attn/kernels/bf16.h"
#include "attn/kernels/gemm.h"

namespace {

using attn::BatchedBackend;
using attn::GemmArgs;
using attn::GemmBackend;
using clock_type = std::chrono::steady_clock;

double g_seconds = 0.3;

double elapsed(clock_type::time_point since) {
  return std::chrono::duration<double>(clock_type::now() - since).count();
}

// One thing to time. OpenBLAS's pthread workers busy-wait for up to ~0.1 s after a call; a
// candidate that wakes them is followed by a pause so that they do not slow the next one.
struct Candidate {
  std::function<void()> run;
  bool wakes_openblas_pool = false;
};

// Seconds per call of each candidate, best of 7 rounds that take turns (A B C A B C ...), so
// that on a shared machine every candidate sees the same disturbances.
std::vector<double> time_per_call(const std::vector<Candidate>& cs) {
  constexpr int kRounds = 7;
  auto settle = [](const Candidate& c) {
    if (c.wakes_openblas_pool && attn::num_threads() > 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
  };
  for (const auto& c : cs) c.run(), settle(c);  // warm-up: page faults, primitive creation
  std::vector<double> best(cs.size(), INFINITY);
  for (int round = 0; round < kRounds; ++round)
    for (size_t i = 0; i < cs.size(); ++i) {
      const auto start = clock_type::now();
      int reps = 0;
      do {
        cs[i].run();
        ++reps;
      } while (elapsed(start) < g_seconds / kRounds);
      best[i] = std::min(best[i], elapsed(start) / reps);
      settle(cs[i]);
    }
  return best;
}

struct Shape {
  const char* what;
  bool ta, tb;
  int64_t m, n, k;
};

struct Buffers {
  std::vector<float> a, b, c;
  std::vector<uint16_t> a16, b16;
  GemmArgs args;
  explicit Buffers(const Shape& s, int64_t batch = 1) {
    a.assign(batch * s.m * s.k, 0.0f);
    b.assign(batch * s.k * s.n, 0.0f);
    c.assign(batch * s.m * s.n, 0.0f);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) * 0.0625f - 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 11) * 0.125f - 0.625f;
    args = {s.ta, s.tb, s.m, s.n, s.k, 1.0f, 0.0f, a.data(), s.ta ? s.m : s.k,
            b.data(), s.tb ? s.k : s.n, c.data(), s.n};
  }
};

double gflops(double flops, double seconds) { return flops / seconds * 1e-9; }

std::string cell(double g, double peak) {
  char s[32];
  if (g <= 0) return "      -      ";
  std::snprintf(s, sizeof s, "%6.1f (%.2f)", g, g / peak);
  return s;
}

// One OpenBLAS sgemv (M = 1) on OpenBLAS's own pthreads, the usual way to do a decoding step.
void openblas_threaded_sgemv(const Shape& s, Buffers& buf) {
  openblas_set_num_threads(attn::num_threads());
  if (s.tb)  // B stored [n, k]: y = B x
    cblas_sgemv(CblasRowMajor, CblasNoTrans, s.n, s.k, 1.0f, buf.b.data(), s.k, buf.a.data(), 1,
                0.0f, buf.c.data(), 1);
  else  // B stored [k, n]: y = B^T x
    cblas_sgemv(CblasRowMajor, CblasTrans, s.k, s.n, 1.0f, buf.b.data(), s.n, buf.a.data(), 1,
                0.0f, buf.c.data(), 1);
  openblas_set_num_threads(1);
}

std::vector<Shape> fp32_shapes() {
  return {
      {"fwd X W, d_model->d_model", false, false, 4096, 512, 512},
      {"fwd X W, d_model->d_ff (PEAK)", false, false, 4096, 2048, 512},
      {"fwd X W, d_model->vocab", false, false, 4096, 8000, 512},
      {"fwd X W, d_ff->d_model", false, false, 4096, 512, 2048},
      {"fwd X W^T (torch layout)", false, true, 4096, 2048, 512},
      {"bwd dW = X^T dY", true, false, 512, 2048, 4096},
      {"bwd dW = X^T dY, vocab", true, false, 512, 8000, 4096},
      {"bwd dX = dY W^T", false, true, 4096, 512, 2048},
      {"bwd dX = dY W^T, vocab", false, true, 4096, 512, 8000},
      {"decode M=1", false, false, 1, 512, 512},
      {"decode M=1", false, false, 1, 2048, 512},
      {"decode M=1", false, false, 1, 8000, 512},
      {"decode M=1, W^T", false, true, 1, 2048, 512},
      {"decode M=1, W^T", false, true, 1, 8000, 512},
      {"decode M=4", false, false, 4, 2048, 512},
      {"decode M=4, W^T", false, true, 4, 8000, 512},
      {"decode M=32", false, false, 32, 512, 512},
      {"decode M=32", false, false, 32, 2048, 512},
      {"decode M=32", false, false, 32, 8000, 512},
      {"decode M=32, W^T", false, true, 32, 8000, 512},
  };
}

void fp32_table(double& peak) {
  const GemmBackend backends[] = {GemmBackend::onednn, GemmBackend::openblas,
                                  GemmBackend::onednn_matmul, GemmBackend::gemv};
  struct Row {
    Shape s;
    double g[4];
    double sgemv, chosen;
  };
  std::vector<Row> rows;
  for (const Shape& s : fp32_shapes()) {
    Buffers buf(s);
    Row r{s, {}, 0.0, 0.0};
    const double flops = 2.0 * s.m * s.n * s.k;
    std::vector<Candidate> cs;
    std::vector<double*> out;
    for (int i = 0; i < 4; ++i) {
      if (backends[i] == GemmBackend::gemv && s.m != 1 && s.n != 1) continue;
      cs.push_back({[&, i] { attn::gemm(buf.args, backends[i]); },
                    backends[i] == GemmBackend::openblas});
      out.push_back(&r.g[i]);
    }
    if (s.m == 1 && !s.ta) {
      cs.push_back({[&] { openblas_threaded_sgemv(s, buf); }, true});
      out.push_back(&r.sgemv);
    }
    cs.push_back({[&] { attn::gemm(buf.args); }});
    out.push_back(&r.chosen);
    const std::vector<double> t = time_per_call(cs);
    for (size_t i = 0; i < t.size(); ++i) *out[i] = gflops(flops, t[i]);
    if (s.m == attn::kPeakM && s.n == attn::kPeakN && s.k == attn::kPeakK && !s.ta && !s.tb)
      for (double g : r.g) peak = std::max(peak, g);
    rows.push_back(r);
  }
  std::printf("\nfp32, GFLOPS (fraction of peak %.1f GFLOPS)\n", peak);
  std::printf("%-31s %-2s %5s %5s %5s | %-13s %-13s %-13s %-13s %-13s | %-13s %s\n", "shape", "op",
              "M", "N", "K", "onednn_sgemm", "openblas", "onednn_matmul", "gemv_split",
              "openblas_sgemv", "gemm()", "dispatch");
  for (const Row& r : rows) {
    const Shape& s = r.s;
    std::printf("%-31s %c%c %5lld %5lld %5lld | %s %s %s %s %s | %s %s\n", s.what, s.ta ? 'T' : 'N',
                s.tb ? 'T' : 'N', (long long)s.m, (long long)s.n, (long long)s.k,
                cell(r.g[0], peak).c_str(), cell(r.g[1], peak).c_str(), cell(r.g[2], peak).c_str(),
                cell(r.g[3], peak).c_str(), cell(r.sgemv, peak).c_str(),
                cell(r.chosen, peak).c_str(), attn::backend_name(attn::gemm_dispatch(GemmArgs{s.ta, s.tb, s.m, s.n, s.k})));
  }
}

void batched_table(double peak) {
  struct Case {
    const char* what;
    Shape s;
    int64_t batch;
  };
  const Case cases[] = {
      {"scores Q K^T, 256 x [32x64][64x32]", {"", false, true, 32, 32, 64}, 256},
      {"context P V, 256 x [32x32][32x64]", {"", false, false, 32, 64, 32}, 256},
      {"scores Q K^T, 64 x [128x64][64x128]", {"", false, true, 128, 128, 64}, 64},
      {"context P V, 64 x [128x128][128x64]", {"", false, false, 128, 64, 128}, 64},
      {"decode q K^T, 256 x [1x64][64x128]", {"", false, true, 1, 128, 64}, 256},
  };
  const BatchedBackend backends[] = {BatchedBackend::parallel_onednn,
                                     BatchedBackend::parallel_openblas,
                                     BatchedBackend::onednn_matmul, BatchedBackend::automatic};
  std::printf("\nbatched fp32, GFLOPS (fraction of peak)\n%-38s | %-13s %-13s %-13s | %-13s\n",
              "products", "omp+onednn", "omp+openblas", "onednn_matmul", "gemm_batched()");
  for (const Case& c : cases) {
    Buffers buf(c.s, c.batch);
    const int64_t sa = c.s.m * c.s.k, sb = c.s.k * c.s.n, sc = c.s.m * c.s.n;
    const double flops = 2.0 * c.batch * c.s.m * c.s.n * c.s.k;
    std::vector<Candidate> cs;
    for (BatchedBackend b : backends)
      cs.push_back({[&, b] { attn::gemm_batched(buf.args, c.batch, sa, sb, sc, b); }});
    const std::vector<double> t = time_per_call(cs);
    std::printf("%-38s |", c.what);
    for (size_t i = 0; i < t.size(); ++i)
      std::printf(" %s%s", cell(gflops(flops, t[i]), peak).c_str(), i == 2 ? " |" : "");
    std::printf("\n");
  }
}

void bf16_table(double peak) {
  const Shape shapes[] = {{"X W, d_model->d_model", false, false, 4096, 512, 512},
                          {"X W, d_model->d_ff", false, false, 4096, 2048, 512},
                          {"X W, d_model->vocab", false, false, 4096, 8000, 512},
                          {"X W, d_ff->d_model", false, false, 4096, 512, 2048},
                          {"X W^T (torch layout)", false, true, 4096, 2048, 512},
                          {"dW = X^T dY", true, false, 512, 2048, 4096},
                          {"dX = dY W^T", false, true, 4096, 512, 2048},
                          {"decode M=32", false, false, 32, 2048, 512}};
  std::printf("\nbf16 (oneDNN matmul, f32 accumulation), GFLOPS (fraction of fp32 peak)\n"
              "%-24s %-2s %5s %5s %5s | %-13s %-13s\n", "shape", "op", "M", "N", "K",
              "f32 in", "bf16 in");
  for (const Shape& s : shapes) {
    Buffers buf(s);
    buf.a16.resize(buf.a.size());
    buf.b16.resize(buf.b.size());
    attn::round_to_bf16(buf.a.data(), buf.a16.data(), static_cast<int64_t>(buf.a.size()));
    attn::round_to_bf16(buf.b.data(), buf.b16.data(), static_cast<int64_t>(buf.b.size()));
    const GemmArgs& g = buf.args;
    const attn::GemmBf16Args h{g.trans_a, g.trans_b, g.m, g.n, g.k, 1.0f, 0.0f,
                               buf.a16.data(), g.lda, buf.b16.data(), g.ldb, buf.c.data(), g.ldc};
    const double flops = 2.0 * s.m * s.n * s.k;
    const std::vector<double> t =
        time_per_call({Candidate{[&] { attn::gemm_bf16(g); }}, Candidate{[&] { attn::gemm_bf16(h); }}});
    const double from_f32 = gflops(flops, t[0]), from_bf16 = gflops(flops, t[1]);
    std::printf("%-24s %c%c %5lld %5lld %5lld | %s %s\n", s.what, s.ta ? 'T' : 'N', s.tb ? 'T' : 'N',
                (long long)s.m, (long long)s.n, (long long)s.k, cell(from_f32, peak).c_str(),
                cell(from_bf16, peak).c_str());
  }
}

// An OpenMP loop of attn's kind (element-wise, ~1 ms) run right after a GEMM: does the BLAS's
// thread pool get in its way? Compares the pair's time with the sum of the two alone.
void interference_table() {
  const Shape s{"", false, false, 512, 512, 512};
  Buffers buf(s);
  std::vector<float> x(1 << 22, 0.5f);
  auto omp_loop = [&] {  // a few ms of an element-wise pass over 16 MB, split like attn's loops
    for (int pass = 0; pass < 4; ++pass) {
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] * 0.999f + 0.001f;
    }
  };
  auto openblas_gemm = [&] { attn::gemm(buf.args, GemmBackend::openblas); };
  auto onednn_gemm = [&] { attn::gemm(buf.args, GemmBackend::onednn); };
  const std::vector<double> t = time_per_call({
      Candidate{omp_loop},
      Candidate{onednn_gemm},
      Candidate{[&] { onednn_gemm(), omp_loop(); }},
      Candidate{openblas_gemm, true},
      Candidate{[&] { openblas_gemm(), omp_loop(); }, true},
  });
  std::printf("\nOpenMP loops (4 passes over 4M floats) right after a 512^3 GEMM, ms per call\n"
              "  loop alone %.3f\n", t[0] * 1e3);
  std::printf("  onednn_sgemm    gemm alone %.3f, gemm+loop %.3f = %.2fx the sum\n", t[1] * 1e3,
              t[2] * 1e3, t[2] / (t[0] + t[1]));
  std::printf("  openblas_sgemm  gemm alone %.3f, gemm+loop %.3f = %.2fx the sum\n", t[3] * 1e3,
              t[4] * 1e3, t[4] / (t[0] + t[3]));
}

double load_average() {
  double load = -1.0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1.0;
    std::fclose(f);
  }
  return load;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = attn::num_threads();
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) g_seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_gemm [--threads N] [--seconds S]\n");
      return 2;
    }
  }
  if (threads < 1) {
    std::fprintf(stderr, "bench_gemm: --threads must be >= 1, got %d\n", threads);
    return 2;
  }
  attn::set_num_threads(threads);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  std::printf("bench_gemm: %d threads; OpenBLAS core %s (OPENBLAS_CORETYPE=%s); OMP_WAIT_POLICY=%s;"
              " load average %.2f at start (figures are best of 7 rounds; a busy machine lowers them)\n",
              threads, openblas_get_corename(), coretype ? coretype : "unset", wait ? wait : "unset",
              load_average());
  double peak = 0.0;
  fp32_table(peak);
  batched_table(peak);
  bf16_table(peak);
  interference_table();
  std::printf("\nGEMM peak (best fp32 on M=4096 K=512 N=2048, %d threads): %.1f GFLOPS; "
              "measure_gemm_peak_gflops(%d) = %.1f; load average %.2f at end\n",
              threads, peak, threads, attn::measure_gemm_peak_gflops(threads), load_average());
  return 0;
}
