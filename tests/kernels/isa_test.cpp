// The runtime choice of instruction set (kernels/cpu.h): the features and the Isa chosen from cpuid
// against /proc/cpuinfo, the ATTN_ISA setting, and every hand-written kernel on each Isa this CPU
// has against its generic form: bit for bit where the kernel's arithmetic is the same on every Isa
// (dropout masks, int8 quantization, max), within the tolerances of the kernels' own tests where
// the order of the sums or the exp differs.
#include "attn/kernels/cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/adam_update.h"
#include "attn/kernels/attend_rows.h"
#include "attn/kernels/dropout_bits.h"
#include "attn/kernels/gemm_few_rows.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/gemm_panels.h"
#include "attn/kernels/gemm_s8_gemv.h"
#include "attn/kernels/gemm_small.h"
#include "attn/kernels/vexp.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

// The flags line of /proc/cpuinfo, with spaces around each flag.
std::string cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) return line.substr(line.find(':') + 1) + " ";
  return "";
}

bool listed(const std::string& flags, const char* flag) { return flags.find(std::string(" ") + flag + " ") != std::string::npos; }

std::vector<Isa> isas_here() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    if (static_cast<int>(isa) <= static_cast<int>(best_isa(cpu_features()))) out.push_back(isa);
  return out;
}

// Runs f with the kernels of `isa`, then puts the Isa before back.
template <typename F>
auto with_isa(Isa isa, F f) {
  struct Restore {
    Isa before;
    ~Restore() { set_active_isa_for_testing(before); }
  } restore{set_active_isa_for_testing(isa)};
  return f();
}

std::vector<float> uniform(int64_t n, uint64_t seed, float lo, float hi) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = lo + static_cast<float>(rng.uniform()) * (hi - lo);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
  EXPECT_LE(worst, rel) << what;
}

TEST(Isa, FeaturesMatchProcCpuinfo) {
  const std::string flags = cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo";
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(f.avx2, listed(flags, "avx2"));
  EXPECT_EQ(f.fma, listed(flags, "fma"));
  EXPECT_EQ(f.f16c, listed(flags, "f16c"));
  EXPECT_EQ(f.avx512f, listed(flags, "avx512f"));
  EXPECT_EQ(f.avx512bw, listed(flags, "avx512bw"));
  EXPECT_EQ(f.avx512_vnni, listed(flags, "avx512_vnni"));
  EXPECT_EQ(f.avx512_bf16, listed(flags, "avx512_bf16"));
  EXPECT_EQ(f.amx_tile, listed(flags, "amx_tile"));
  std::printf("%s", cpu_description().c_str());
}

// A portable build (-march=x86-64-v2) runs the AVX2 kernels on an AVX2 CPU such as this Zen 3,
// and the AVX-512 ones where the CPU has them: the choice is cpuid's, not the compiler's.
TEST(Isa, ChoosesTheBestTheCpuHas) {
  const std::string flags = cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo";
  const bool avx2 = listed(flags, "avx2") && listed(flags, "fma") && listed(flags, "f16c");
  const bool avx512 = avx2 && listed(flags, "avx512f") && listed(flags, "avx512bw") && listed(flags, "avx512dq") &&
                      listed(flags, "avx512vl");
  const Isa expected = avx512 ? Isa::avx512 : avx2 ? Isa::avx2 : Isa::generic;
  EXPECT_EQ(best_isa(cpu_features()), expected);
  const char* setting = std::getenv("ATTN_ISA");
  if (setting == nullptr || *setting == '\0') {
    EXPECT_EQ(active_isa(), expected) << "chose " << isa_name(active_isa());
  }
}

TEST(Isa, SettingLowersTheChoiceAndRejectsUnknownNames) {
  EXPECT_EQ(isa_from_setting(nullptr, Isa::avx512), Isa::avx512);
  EXPECT_EQ(isa_from_setting("", Isa::avx2), Isa::avx2);
  EXPECT_EQ(isa_from_setting("generic", Isa::avx512), Isa::generic);
  EXPECT_EQ(isa_from_setting("avx2", Isa::avx512), Isa::avx2);
  EXPECT_EQ(isa_from_setting("avx512", Isa::avx2), Isa::avx2);  // capped to what the CPU has
  EXPECT_EQ(isa_from_setting("avx512", Isa::generic), Isa::generic);
  try {
    isa_from_setting("avx-512", Isa::avx2);
    ADD_FAILURE() << "no error for an unknown name";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ATTN_ISA: unknown instruction set 'avx-512'"), std::string::npos) << e.what();
  }
  if (best_isa(cpu_features()) != Isa::avx512) {
    EXPECT_THROW(set_active_isa_for_testing(Isa::avx512), Error);
  }
}

TEST(Isa, AvailabilityOfTheGemmKernels) {
  for (Isa isa : isas_here()) {
    with_isa(isa, [&] {
      EXPECT_EQ(few_rows_available(), isa != Isa::generic) << isa_name(isa);
      EXPECT_EQ(f32_panels_available(), isa != Isa::generic) << isa_name(isa);
      const bool s8 = (isa == Isa::avx512 && cpu_features().avx512_vnni) || (isa != Isa::generic && !cpu_has_int8_dot());
      EXPECT_EQ(s8_gemv_available(), s8) << isa_name(isa);
      return 0;
    });
  }
}

TEST(Isa, VexpMatchesGeneric) {
  for (int64_t n : {1, 7, 8, 15, 16, 17, 100, 1000}) {
    const std::vector<float> x = uniform(n, 3 + n, -20.0f, 5.0f);
    auto run = [&] {
      std::vector<float> out{max_of(x.data(), n), sum_exp(x.data(), n, 1.5f)};
      std::vector<float> y(n), z(n, 0.5f);
      out.push_back(exp_shifted(x.data(), y.data(), n, 2.0f));
      exp_affine(x.data(), z.data(), n, 1.0f, 2.0f, -0.25f, true);
      out.insert(out.end(), y.begin(), y.end());
      out.insert(out.end(), z.begin(), z.end());
      return out;
    };
    const std::vector<float> want = with_isa(Isa::generic, run);
    for (Isa isa : isas_here()) {
      const std::vector<float> got = with_isa(isa, run);
      EXPECT_EQ(got[0], want[0]) << isa_name(isa) << " max_of n " << n;
      // vexp_test's 1e-6 is against double sums; here two float sums in different orders
      expect_close(got, want, 4e-6, std::string(isa_name(isa)) + " vexp n " + std::to_string(n));
    }
  }
}

TEST(Isa, AttendRowsMatchGeneric) {
  for (int64_t dk : {1, 17, 60, 64, 129, 300}) {
    const int64_t rows = 13, ld = dk + 3;
    const std::vector<float> q = uniform(dk, 5, -1, 1), kv = uniform(rows * ld, 6, -1, 1), p = uniform(rows, 7, 0, 1);
    std::vector<const float*> at(rows);
    for (int64_t j = 0; j < rows; ++j) at[j] = kv.data() + (rows - 1 - j) * ld;
    auto run = [&] {
      std::vector<float> s(rows), o(dk), s2(rows), o2(dk);
      scores_one_query(q.data(), kv.data(), ld, rows, dk, 0.125f, s.data());
      weighted_rows(p.data(), kv.data(), ld, rows, dk, o.data());
      scores_one_query_at(q.data(), at.data(), rows, dk, 0.125f, s2.data());
      weighted_rows_at(p.data(), at.data(), rows, dk, o2.data());
      for (auto* v : {&o, &s2, &o2}) s.insert(s.end(), v->begin(), v->end());
      return s;
    };
    const std::vector<float> want = with_isa(Isa::generic, run);
    for (Isa isa : isas_here())
      expect_close(with_isa(isa, run), want, 1e-5, std::string(isa_name(isa)) + " attend_rows dk " + std::to_string(dk));
  }
}

TEST(Isa, GemmSmallAndFewRowsMatchGeneric) {
  for (bool trans_b : {false, true}) {
    const int64_t m = 7, n = 37, k = 45;
    const std::vector<float> a = uniform(m * k, 8, -1, 1), b = uniform(k * n, 9, -1, 1);
    auto run = [&](bool few_rows) {
      std::vector<float> c(m * n, 0.5f);
      const GemmArgs g{false, trans_b, m, n, k, 1.0f, 0.5f, a.data(), k, b.data(), trans_b ? k : n, c.data(), n};
      if (few_rows)
        gemm_few_rows(g);
      else
        gemm_small(g);
      return c;
    };
    const std::vector<float> want = with_isa(Isa::generic, [&] { return run(false); });
    for (Isa isa : isas_here()) {
      expect_close(with_isa(isa, [&] { return run(false); }), want, 1e-5, std::string(isa_name(isa)) + " gemm_small");
      if (trans_b && isa != Isa::generic)
        expect_close(with_isa(isa, [&] { return run(true); }), want, 1e-5, std::string(isa_name(isa)) + " few_rows");
    }
  }
}

TEST(Isa, PanelsMatchGemmSmall) {
  if (best_isa(cpu_features()) == Isa::generic) GTEST_SKIP() << "no AVX2 here";
  const int64_t m = 20, n = 40, k = 300;
  const std::vector<float> x = uniform(m * k, 10, -1, 1), w = uniform(n * k, 11, -1, 1);
  std::vector<float> want(m * n), got(m * n);
  with_isa(Isa::generic, [&] {
    gemm_small({false, true, m, n, k, 1.0f, 0.0f, x.data(), k, w.data(), k, want.data(), n});
    return 0;
  });
  with_isa(Isa::avx2, [&] {
    const F32Panels p = pack_f32_panels(w.data(), n, k, k);
    gemm_f32_panels(m, x.data(), k, p, 0.0f, got.data(), n);
    return 0;
  });
  expect_close(got, want, 1e-5, "avx2 panels");
}

TEST(Isa, QuantizeIsBitIdentical) {
  // rows whole and partial vectors of 8 and 16 lanes; row 1 all zeros (scale 1), row 2 halves
  // (x.5 rounds to even)
  for (int64_t cols : {1, 8, 15, 16, 77}) {
    const int64_t rows = 5, ldu = (cols + 3) / 4 * 4;
    std::vector<float> x = uniform(rows * cols, 12 + cols, -3, 3);
    for (int64_t j = 0; j < cols; ++j) {
      x[cols + j] = 0.0f;
      x[2 * cols + j] = static_cast<float>(j % 7) - 2.5f;
    }
    x[2 * cols] = 63.0f;  // the row's max: scale 1 with qmax 63, so q = x exactly (halves to even)
    auto run = [&] {
      std::vector<int8_t> q(rows * cols);
      std::vector<float> scales(rows);
      quantize_rows_s8(x.data(), rows, cols, cols, q.data(), scales.data(), 127);
      std::vector<float> out(scales);
      for (int8_t v : q) out.push_back(v);
      quantize_rows_s8(x.data(), rows, cols, cols, q.data(), scales.data(), 63);
      out.insert(out.end(), scales.begin(), scales.end());
      for (int8_t v : q) out.push_back(v);
      std::vector<uint8_t> u(rows * ldu);
      quantize_rows_u8(x.data(), rows, cols, cols, u.data(), ldu, scales.data());
      for (uint8_t v : u) out.push_back(v);
      return out;
    };
    const std::vector<float> want = with_isa(Isa::generic, run);
    for (Isa isa : isas_here()) EXPECT_EQ(with_isa(isa, run), want) << isa_name(isa) << " cols " << cols;
  }
}

TEST(Isa, DequantizeIsBitIdentical) {
  // the three epilogues (bias, beta 0, beta y) over rows of whole and partial vectors, sums of
  // every magnitude an int8 product gives
  for (int64_t n : {1, 15, 16, 77}) {
    const int64_t m = 3, ldy = n + 5;
    std::vector<int32_t> acc(m * n);
    const std::vector<float> r = uniform(m * n, 30 + n, -1, 1);
    for (int64_t i = 0; i < m * n; ++i) acc[i] = static_cast<int32_t>(r[i] * 2.0e6f);
    const std::vector<float> sx = uniform(m, 31, 0.001f, 0.1f), sw = uniform(n, 32, 0.001f, 0.1f);
    const std::vector<float> bias = uniform(n, 33, -1, 1), y0 = uniform(m * ldy, 34, -1, 1);
    auto run = [&] {
      std::vector<float> out;
      for (int form = 0; form < 3; ++form) {
        std::vector<float> y = y0;
        dequantize_rows(m, n, acc.data(), sx.data(), sw.data(), form == 0 ? bias.data() : nullptr,
                        form == 2 ? 0.7f : 0.0f, y.data(), ldy);
        out.insert(out.end(), y.begin(), y.end());
      }
      return out;
    };
    const std::vector<float> want = with_isa(Isa::generic, run);
    for (int64_t i = 0; i < m; ++i)  // the generic form is the definition
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(want[i * ldy + j], std::fma(sx[i] * sw[j], static_cast<float>(acc[i * n + j]), bias[j]));
    for (Isa isa : isas_here()) EXPECT_EQ(with_isa(isa, run), want) << isa_name(isa) << " n " << n;
  }
}

TEST(Isa, DropoutIsBitIdentical) {
  const int64_t cols = 77;
  const std::vector<float> x = uniform(cols, 13, -1, 1), bias = uniform(cols, 14, -1, 1);
  // a stream whose 32-bit key changes inside the row (the scalar path) and one where it does not
  for (uint64_t first : {uint64_t{1000}, (uint64_t{1} << 32) - 40}) {
    const DropoutStream s = dropout_stream(0.3f, 42, first);
    auto run = [&] {
      std::vector<float> y(cols), dx(cols);
      std::vector<uint32_t> bits(mask_words_per_row(cols));
      dropout_row(x.data(), bias.data(), y.data(), cols, true, s, 0, bits.data());
      dropout_row_backward(x.data(), bits.data(), s.keep, dx.data(), cols);
      y.insert(y.end(), dx.begin(), dx.end());
      for (uint32_t w : bits) y.push_back(static_cast<float>(w));
      y.push_back(static_cast<float>(keep_bits(s, 5, 32)));
      return y;
    };
    const std::vector<float> want = with_isa(Isa::generic, run);
    for (Isa isa : isas_here()) EXPECT_EQ(with_isa(isa, run), want) << isa_name(isa) << " first " << first;
  }
}

TEST(Isa, AdamMatchesGeneric) {
  const int64_t n = 1000;
  const std::vector<float> g = uniform(n, 15, -1, 1), w0 = uniform(n, 16, -1, 1), m0 = uniform(n, 17, -0.1f, 0.1f),
                           v0 = uniform(n, 18, 0, 0.01f);
  const AdamStep s{0.9f, 0.98f, 1e-9f, 0.01f, 1e-3f, 0.2f};
  auto run = [&] {
    std::vector<float> w = w0, m = m0, v = v0;
    adam_update(w.data(), g.data(), m.data(), v.data(), n, s);
    w.insert(w.end(), m.begin(), m.end());
    w.insert(w.end(), v.begin(), v.end());
    return w;
  };
  const std::vector<float> want = with_isa(Isa::generic, run);
  // the same bits where the generic loops were compiled with FMA too (a native build); else the
  // products the compiler fused differ in the last bit
  for (Isa isa : isas_here()) expect_close(with_isa(isa, run), want, 1e-6, std::string(isa_name(isa)) + " adam");
}

}  // namespace
}  // namespace attn
