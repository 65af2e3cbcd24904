// bench_gemm: GFLOPS of every GEMM backend on the Transformer's shapes, the backend gemm()
// dispatches to, and each figure as a fraction of the "GEMM peak" (the best fp32 figure on
// M=4096, K=512, N=2048). Also bf16, batched attention products, and whether a BLAS call slows
// the OpenMP loop that follows it.
//   bench_gemm [--threads N] [--seconds S] [--few-rows]   (S: time per figure, default 0.3;
//   --few-rows: only the table of x W^T for few rows with W streamed from memory)
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
#include "attn/kernels/gemm_few_rows.h"
#include "gemm_openblas.h"

namespace {

using attn::GemmArgs;
using attn::Kernel;
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

// The ways to compute one product that the fp32 table compares.
struct Method {
  const char* name;
  bool vector_only;  // M == 1 or N == 1
  bool wakes_openblas_pool;
  std::function<void(const GemmArgs&)> run;
};

std::vector<Method> fp32_methods() {
  const int threads = attn::num_threads();
  return {
      {"onednn_sgemm", false, false, [](const GemmArgs& g) { attn::gemm(g, Kernel::onednn_sgemm); }},
      {"onednn_matmul", false, false,
       [](const GemmArgs& g) { attn::gemm(g, Kernel::onednn_matmul); }},
      {"openblas_sgemm", false, true, [=](const GemmArgs& g) { attn::gemm_openblas(g, threads); }},
      {"openblas_sgemv", true, true, [=](const GemmArgs& g) { attn::gemv_openblas(g, threads); }},
      {"omp+1t_sgemv", true, false, [](const GemmArgs& g) { attn::gemv_openblas_split(g); }},
      {"gemm()", false, false, [](const GemmArgs& g) { attn::gemm(g); }},
  };
}

void fp32_table(double& peak) {
  const std::vector<Method> methods = fp32_methods();
  std::vector<std::vector<double>> figures;  // [shape][method], 0 where not applicable
  for (const Shape& s : fp32_shapes()) {
    Buffers buf(s);
    std::vector<Candidate> cs;
    std::vector<size_t> which;
    for (size_t i = 0; i < methods.size(); ++i) {
      if (methods[i].vector_only && s.m != 1 && s.n != 1) continue;
      cs.push_back({[&, i] { methods[i].run(buf.args); }, methods[i].wakes_openblas_pool});
      which.push_back(i);
    }
    const std::vector<double> t = time_per_call(cs);
    std::vector<double> g(methods.size(), 0.0);
    for (size_t i = 0; i < t.size(); ++i) g[which[i]] = gflops(2.0 * s.m * s.n * s.k, t[i]);
    if (s.m == attn::kPeakM && s.n == attn::kPeakN && s.k == attn::kPeakK && !s.ta && !s.tb)
      peak = std::max(peak, *std::max_element(g.begin(), g.end()));
    figures.push_back(g);
  }
  std::printf("\nfp32, GFLOPS (fraction of peak %.1f GFLOPS)\n%-31s %-2s %5s %5s %5s |", peak,
              "shape", "op", "M", "N", "K");
  for (const Method& m : methods) std::printf(" %-13s", m.name);
  std::printf(" dispatch\n");
  const std::vector<Shape> shapes = fp32_shapes();
  for (size_t r = 0; r < shapes.size(); ++r) {
    const Shape& s = shapes[r];
    std::printf("%-31s %c%c %5lld %5lld %5lld |", s.what, s.ta ? 'T' : 'N', s.tb ? 'T' : 'N',
                (long long)s.m, (long long)s.n, (long long)s.k);
    for (double g : figures[r]) std::printf(" %s", cell(g, peak).c_str());
    std::printf(" %s\n", attn::kernel_name(attn::plan_gemm(GemmArgs{s.ta, s.tb, s.m, s.n, s.k}).kernel));
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
  std::printf("\nbatched fp32, GFLOPS (fraction of peak)\n%-38s | %-13s %-13s %-13s | %-13s\n",
              "products", "omp+onednn", "onednn_matmul", "omp+openblas", "gemm_batched()");
  for (const Case& c : cases) {
    Buffers buf(c.s, c.batch);
    const int64_t sa = c.s.m * c.s.k, sb = c.s.k * c.s.n, sc = c.s.m * c.s.n;
    const double flops = 2.0 * c.batch * c.s.m * c.s.n * c.s.k;
    const GemmArgs& g = buf.args;
    const std::vector<double> t = time_per_call({
        Candidate{[&] { attn::gemm_batched(g, c.batch, sa, sb, sc, Kernel::omp_over_batch); }},
        Candidate{[&] { attn::gemm_batched(g, c.batch, sa, sb, sc, Kernel::batched_matmul); }},
        Candidate{[&] { attn::gemm_batched_openblas(g, c.batch, sa, sb, sc); }},
        Candidate{[&] { attn::gemm_batched(g, c.batch, sa, sb, sc); }},
    });
    std::printf("%-38s |", c.what);
    for (size_t i = 0; i < t.size(); ++i)
      std::printf(" %s%s", cell(gflops(flops, t[i]), peak).c_str(), i == 2 ? " |" : "");
    std::printf(" %s\n", attn::kernel_name(attn::plan_batched(g, c.batch).kernel));
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

// Does the BLAS's thread pool get in the way of the OpenMP work that follows it? A 512^3 GEMM
// followed by 20 small OpenMP-threaded products (1x512x512, one decoding step's worth): the
// time of the small products after each kind of GEMM, against their time alone.
void interference_table() {
  const Shape big{"", false, false, 512, 512, 512}, small{"", false, false, 1, 512, 512};
  Buffers big_buf(big), small_buf(small);
  auto small_ops = [&] {
    for (int i = 0; i < 20; ++i) attn::gemm(small_buf.args);
  };
  auto openblas_gemm = [&] { attn::gemm_openblas(big_buf.args, attn::num_threads()); };
  auto onednn_gemm = [&] { attn::gemm(big_buf.args, Kernel::onednn_sgemm); };
  const std::vector<double> t = time_per_call({
      Candidate{small_ops},
      Candidate{onednn_gemm},
      Candidate{[&] { onednn_gemm(), small_ops(); }},
      Candidate{openblas_gemm, true},
      Candidate{[&] { openblas_gemm(), small_ops(); }, true},
  });
  std::printf("\n20 small OpenMP products (1x512x512) right after a 512^3 GEMM, ms\n"
              "  alone                       %.3f\n", t[0] * 1e3);
  std::printf("  after onednn_sgemm          %.3f (%.1fx)\n", (t[2] - t[1]) * 1e3,
              (t[2] - t[1]) / t[0]);
  std::printf("  after openblas_sgemm        %.3f (%.1fx)  [OpenBLAS workers busy-waiting]\n",
              (t[4] - t[3]) * 1e3, (t[4] - t[3]) / t[0]);
}

// x W^T for few rows with W streamed from memory, as in a decoding step (whose 104 MB of weights
// do not stay in any cache): each call takes the next of enough copies of W to fill 256 MB.
// Weight bytes per second (GB/s) against the machine's read bandwidth, and GFLOPS.
void few_rows_table() {
  struct Case {
    int64_t n, k;
  };
  const Case cases[] = {{512, 512}, {1536, 512}, {2048, 512}, {512, 2048}, {8000, 512}};
  const int64_t ms[] = {1, 2, 4, 8, 16, 32, 64, 128};
  std::printf("\nx W^T, W [N, K] streamed from memory (a new copy each call): weight GB/s, GFLOPS\n"
              "%5s %5s %5s | %-15s %-15s %-15s | dispatch\n", "M", "N", "K", "onednn_sgemm", "onednn_matmul",
              "few_rows");
  for (const Case& c : cases)
    for (int64_t m : ms) {
      const int64_t bytes = c.n * c.k * 4, copies = std::max<int64_t>(2, (int64_t{256} << 20) / bytes);
      std::vector<float> w(static_cast<size_t>(copies * c.n * c.k)), x(static_cast<size_t>(m * c.k)),
          y(static_cast<size_t>(m * c.n));
      for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 11) * 0.125f - 0.625f;
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) * 0.0625f - 0.5f;
      int64_t next = 0;
      auto call = [&](Kernel b) {
        const float* wn = w.data() + next * c.n * c.k;
        const GemmArgs g{false, true, m, c.n, c.k, 1.0f, 0.0f, x.data(), c.k, wn, c.k, y.data(), c.n};
        next = (next + 1) % copies;
        attn::gemm(g, b);
      };
      std::vector<Candidate> cs{{[&] { call(Kernel::onednn_sgemm); }}, {[&] { call(Kernel::onednn_matmul); }}};
      if (attn::few_rows_available()) cs.push_back({[&] { call(Kernel::few_rows); }});
      const std::vector<double> t = time_per_call(cs);
      std::printf("%5lld %5lld %5lld |", (long long)m, (long long)c.n, (long long)c.k);
      for (double sec : t) std::printf(" %5.1f %8.1f |", bytes / sec * 1e-9, gflops(2.0 * m * c.n * c.k, sec));
      std::printf(" %s\n", attn::kernel_name(attn::plan_gemm(GemmArgs{false, true, m, c.n, c.k}).kernel));
    }
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
  bool few_rows_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--few-rows")) few_rows_only = true;
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) g_seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_gemm [--threads N] [--seconds S] [--few-rows]\n");
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
              threads, attn::openblas_core_name(), coretype ? coretype : "unset", wait ? wait : "unset",
              load_average());
  if (few_rows_only) {
    few_rows_table();
    return 0;
  }
  double peak = 0.0;
  fp32_table(peak);
  batched_table(peak);
  bf16_table(peak);
  interference_table();
  few_rows_table();
  std::printf("\nGEMM peak (best fp32 on M=4096 K=512 N=2048, %d threads): %.1f GFLOPS; "
              "measure_gemm_peak_gflops(%d) = %.1f; load average %.2f at end\n",
              threads, peak, threads, attn::measure_gemm_peak_gflops(threads), load_average());
  return 0;
}
