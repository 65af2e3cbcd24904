// x W^T over W packed once into panels of 16 outputs (include/attn/kernels/gemm_panels.h): the
// packing, the checks and the split of the panels among threads; the kernels are in the AVX2 and
// AVX-512 tables (avx2/gemm_panels.cpp, avx512/gemm_panels.cpp).
#include "attn/kernels/gemm_panels.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/parallel.h"
#include "kernel_table.h"

namespace attn {

namespace detail {

template <>
void fill_gemm_panels<Isa::generic>(KernelTable&) {}

}  // namespace detail

namespace {

constexpr int64_t kParallelWork = 1 << 18;  // m n k below which one thread is faster

}  // namespace

bool f32_panels_available() { return detail::kernel_table().panels_run != nullptr; }

F32Panels pack_f32_panels(const float* w, int64_t n, int64_t k, int64_t ldw) {
  check(n >= 1 && k >= 1 && ldw >= k, "pack_f32_panels: bad weight n=", n, " k=", k, " ldw=", ldw);
  F32Panels p;
  p.n = n;
  p.k = k;
  const int64_t panels = (n + kPanelWidth - 1) / kPanelWidth;
  p.data = std::make_unique<float[]>(panels * k * kPanelWidth);
  float* dst = p.data.get();
  for_each_index(panels, n * k >= (1 << 16), [&](int64_t q) {
    for (int64_t j = 0; j < kPanelWidth; ++j) {
      const int64_t row = q * kPanelWidth + j;
      float* d = dst + q * k * kPanelWidth + j;
      for (int64_t kk = 0; kk < k; ++kk) d[kk * kPanelWidth] = row < n ? w[row * ldw + kk] : 0.0f;
    }
  });
  return p;
}

std::vector<float> unpack_f32_panels(const F32Panels& p) {
  std::vector<float> w(static_cast<size_t>(p.n * p.k));
  for (int64_t row = 0; row < p.n; ++row) {
    const float* src = p.data.get() + row / kPanelWidth * p.k * kPanelWidth + row % kPanelWidth;
    for (int64_t kk = 0; kk < p.k; ++kk) w[static_cast<size_t>(row * p.k + kk)] = src[kk * kPanelWidth];
  }
  return w;
}

void gemm_f32_panels(int64_t m, const float* x, int64_t ldx, const F32Panels& w, float beta, float* y, int64_t ldy,
                     const float* bias) {
  check(m >= 0 && ldx >= w.k && ldy >= w.n, "gemm_f32_panels: bad arguments m=", m, " ldx=", ldx, " ldy=", ldy,
        " for weight [", w.n, ", ", w.k, "]");
  check(bias == nullptr || beta == 0.0f, "gemm_f32_panels: a bias replaces beta y (beta must be 0, got ", beta, ")");
  const auto run_panels = detail::kernel_table().panels_run;
  check(run_panels != nullptr, "gemm_f32_panels: needs AVX2 + FMA or AVX-512 (this CPU, or ATTN_ISA, gives ",
        isa_name(active_isa()), ")");
  if (m == 0) return;
  const int64_t panels = (w.n + kPanelWidth - 1) / kPanelWidth;
  on_each_thread(m * w.n * w.k >= kParallelWork, [&](int t, int threads) {
    const int64_t p0 = panels * t / threads, p1 = panels * (t + 1) / threads;
    if (p0 < p1) run_panels(m, x, ldx, w, beta, y, ldy, bias, p0, p1);
  });
}

}  // namespace attn
