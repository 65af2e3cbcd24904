// The int8 product for few rows by AVX-512 VNNI, or by AVX2 on 7-bit weights
// (include/attn/kernels/gemm_s8_gemv.h): the panel packing, the choice of kernel and the split of
// the column groups among threads; the tiled vpdpbusd (vpmaddubsw) kernels are in
// avx512/gemm_s8_gemv.cpp and avx2/gemm_s8_gemv.cpp (x is quantized by quantize_s8.cpp).
#include "attn/kernels/gemm_s8_gemv.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "attn/error.h"
#include "attn/parallel.h"
#include "attn/kernels/cpu.h"
#include "attn/kernels/precision.h"
#include "gemm_s8_gemv_layout.h"
#include "kernel_table.h"

namespace attn {

namespace {

using detail::s8_layout::kGroup;
using detail::s8_layout::kPanel;
using detail::s8_layout::panels_of;

// Multiply-adds (m n k) from which the column groups are split among threads.
constexpr int64_t kParallelWork = int64_t{1} << 19;

// The bytes of W_q[16 p + c, 4 s .. 4 s + 3] start at panel_offset(p, s) + 4 c: group g = p / 4
// holds min(4, panels - 4 g) panels, interleaved step by step.
int64_t panel_offset(int64_t p, int64_t s, int64_t panels, int64_t k4) {
  const int64_t g = p / kGroup, width = std::min<int64_t>(kGroup, panels - g * kGroup);
  return g * kGroup * kPanel * k4 + (s * width + p % kGroup) * 64;
}

// Calls visit(packed byte, j, c) for every W[j, c] (j < n, c < k) in the order of the packed
// layout: one offset computation per 64 bytes.
template <typename Visit>
void for_each_weight(int8_t* data, int64_t n, int64_t k, int64_t k4, Visit visit) {
  const int64_t panels = panels_of(n);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t s = 0; s < k4 / 4; ++s) {
      int8_t* block = data + panel_offset(p, s, panels, k4);
      for (int64_t j = p * kPanel; j < std::min(n, (p + 1) * kPanel); ++j)
        for (int64_t c = 4 * s; c < std::min(k, 4 * s + 4); ++c)
          visit(block[(j % kPanel) * 4 + c % 4], j, c);
    }
}

using GroupKernel = void (*)(const S8GemvArgs& a, const S8Panels& w, int64_t g);

// The AVX-512 kernel where the CPU has VNNI; the AVX2 one where weights are 7-bit (no VNNI:
// int8_weight_max() is 63; a CPU with AVX-VNNI but no AVX-512 keeps 8-bit weights and oneDNN); else
// none, and gemm_packed keeps oneDNN for every m.
GroupKernel group_kernel() {
  const Isa isa = active_isa();
  if (isa == Isa::avx512 && cpu_features().avx512_vnni) return detail::kernel_table(Isa::avx512).s8_gemv_group;
  if (isa != Isa::generic && !cpu_has_int8_dot()) return detail::kernel_table(Isa::avx2).s8_gemv_group;
  return nullptr;
}

}  // namespace

namespace detail {

template <>
void fill_gemm_s8_gemv<Isa::generic>(KernelTable&) {}

}  // namespace detail

bool s8_gemv_available() { return group_kernel() != nullptr; }

void S8Panels::Free::operator()(int8_t* p) const { std::free(p); }

S8Panels pack_s8_panels(const int8_t* w, int64_t n, int64_t k) {
  check(n >= 1 && k >= 1, "pack_s8_panels: bad weight n=", n, " k=", k);
  S8Panels out;
  out.n = n;
  out.k = k;
  out.k4 = (k + 3) / 4 * 4;
  const int64_t panels = panels_of(n);
  const size_t bytes = static_cast<size_t>(panels * kPanel * out.k4);
  out.data.reset(static_cast<int8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  check(out.data != nullptr, "pack_s8_panels: out of memory for ", bytes, " bytes");
  std::memset(out.data.get(), 0, bytes);
  out.comp.assign(panels * kPanel, 0);
  for_each_weight(out.data.get(), n, k, out.k4,
                  [&](int8_t& packed, int64_t j, int64_t c) { packed = w[j * k + c]; });
  // comp[j] = 128 sum_k W[j, k]
  for (int64_t j = 0; j < n; ++j) {
    int32_t sum = 0;
    for (int64_t c = 0; c < k; ++c) sum += w[j * k + c];
    out.comp[j] = 128 * sum;
  }
  return out;
}

std::vector<int8_t> unpack_s8_panels(const S8Panels& p) {
  std::vector<int8_t> w(p.n * p.k);
  for_each_weight(p.data.get(), p.n, p.k, p.k4,
                  [&](int8_t& packed, int64_t j, int64_t c) { w[j * p.k + c] = packed; });
  return w;
}

void gemm_s8_gemv(const S8GemvArgs& a, const S8Panels& w) {
  const GroupKernel run_group = group_kernel();
  check(run_group != nullptr, "gemm_s8_gemv: needs AVX-512 VNNI, or AVX2 with 7-bit weights (this CPU, or ATTN_ISA, "
        "gives ", isa_name(active_isa()), ")");
  check(a.m >= 0 && a.ldxu >= w.k4 && a.ldy >= w.n, "gemm_s8_gemv: bad arguments m=", a.m,
        " ldxu=", a.ldxu, " ldy=", a.ldy, " for weight [", w.n, ", ", w.k, "]");
  const int64_t groups = (panels_of(w.n) + kGroup - 1) / kGroup;
  for_each_index(groups, a.m * w.n * w.k >= kParallelWork, [&](int64_t g) { run_group(a, w, g); });
}

}  // namespace attn
