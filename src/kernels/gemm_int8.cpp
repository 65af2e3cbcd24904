// Inference products with prepared weights, bf16 or int8, through oneDNN matmul primitives
// (include/attn/kernels/gemm_int8.h). The primitive is created for the shape with the weights'
// layout left to oneDNN ("any"); each PackedWeight keeps its weight reordered into the layouts
// the primitives asked for (in practice one per precision), made on first use.
#include <omp.h>

#include <algorithm>
#include <deque>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <oneapi/dnnl/dnnl.hpp>
#include <utility>
#include <vector>

#include "attn/error.h"
#include "attn/parallel.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/gemm_panels.h"
#include "attn/kernels/gemm_s8_gemv.h"
#include "gemm_backends.h"

namespace attn {

using dnnl::memory;

namespace {

dnnl::engine& engine() { return detail::onednn_engine(); }

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// The inputs' type, the weight's as plan_weight stores it: s8 for int8, f32 for fp32; bf16
// products run on bf16 inputs where oneDNN has a bf16 matmul, elsewhere on the same bf16 values
// widened to f32 (precision.h, onednn_has_bf16_matmul()).
memory::data_type input_type(Precision p) {
  switch (plan_weight(p, 0, 0).stored) {
    case OperandType::s8: return memory::data_type::s8;
    case OperandType::bf16: return memory::data_type::bf16;
    case OperandType::f32: break;
  }
  return memory::data_type::f32;
}

}  // namespace

struct PackedWeight {
  Precision precision = Precision::bf16;
  int64_t n = 0, k = 0;
  std::vector<uint16_t> bf16;  // [n, k], row-major
  std::vector<float> bf16_f32;  // [n, k], the bf16 values widened (when oneDNN has no bf16 matmul)
  std::vector<int8_t> s8;      // [n, k], row-major (int8 without panels)
  std::vector<float> scales;   // [n] (int8)
  S8Panels panels;             // s8 in VNNI panels for small m (int8, when s8_gemv_available())
  // fp32: in panels (gemm_panels.h) and/or in `layouts` (oneDNN's), whichever the dispatch table
  // runs this weight's products on: one made when packed, the other from it at the first product
  // that needs it (no plain copy kept).
  mutable F32Panels f32;
  bool f32_panels_first = false;  // packed into panels (else into oneDNN's layout)

  const F32Panels& f32_panels() const {
    std::lock_guard<std::mutex> lock(mutex);
    if (f32.data) return f32;
    std::vector<float> plain(static_cast<size_t>(n * k));  // W [n, k], row-major
    memory out(memory::desc({k, n}, memory::data_type::f32, memory::dims{1, k}), engine(), plain.data());
    dnnl::reorder(layouts.front().second, out).execute(stream(), layouts.front().second, out);
    stream().wait();
    f32 = pack_f32_panels(plain.data(), n, k, k);
    return f32;
  }

  // The weight as the matmul's [k, n] operand in `layout`, reordered on first request.
  const memory& in_layout(const memory::desc& layout) const {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [desc, mem] : layouts)
      if (desc == layout) return mem;
    if (precision == Precision::fp32 && !layouts.empty()) {  // from the layout made first
      memory packed(layout, engine());
      dnnl::reorder(layouts.front().second, packed).execute(stream(), layouts.front().second, packed);
      stream().wait();
      layouts.emplace_back(layout, packed);
      return layouts.back().second;
    }
    // fp32 packed into panels, and int8 with panels, keep no row-major copy: unpacked for the reorder
    const std::vector<float> unpacked_f32 =
        precision == Precision::fp32 ? unpack_f32_panels(f32) : std::vector<float>{};
    const std::vector<int8_t> unpacked =
        precision == Precision::int8 && s8.empty() ? unpack_s8_panels(panels) : std::vector<int8_t>{};
    const void* plain_data = precision == Precision::fp32   ? static_cast<const void*>(unpacked_f32.data())
                             : precision == Precision::bf16 ? (bf16.empty() ? static_cast<const void*>(bf16_f32.data())
                                                                            : static_cast<const void*>(bf16.data()))
                             : s8.empty()                   ? static_cast<const void*>(unpacked.data())
                                                            : static_cast<const void*>(s8.data());
    const memory::desc plain_desc({k, n}, input_type(precision), memory::dims{1, k});
    memory plain(plain_desc, engine(), const_cast<void*>(plain_data));
    memory packed(layout, engine());
    dnnl::reorder(plain, packed).execute(stream(), plain, packed);
    stream().wait();
    layouts.emplace_back(layout, packed);
    return layouts.back().second;
  }

  int64_t bytes() const {
    int64_t total = static_cast<int64_t>(bf16.size() * 2 + bf16_f32.size() * 4 + s8.size() + scales.size() * 4);
    total += (panels.n + 15) / 16 * 16 * panels.k4 + static_cast<int64_t>(panels.comp.size() * 4);
    std::lock_guard<std::mutex> lock(mutex);
    total += (f32.n + kPanelWidth - 1) / kPanelWidth * kPanelWidth * f32.k * 4;
    for (const auto& [desc, mem] : layouts) total += static_cast<int64_t>(desc.get_size());
    return total;
  }

  mutable std::mutex mutex;
  // few; never shrinks; a deque, so that a reference handed out stays valid as others are added
  mutable std::deque<std::pair<memory::desc, memory>> layouts;
};

namespace {

// A primitive for one shape: x [m, k] (bf16 or s8 dense, f32 with row stride ldx) times the weight
// in oneDNN's layout, into y (f32 with row stride ldy, beta as a sum post-op, an optional bias; or
// dense s32 for int8).
struct PackedPrimitive {
  dnnl::matmul primitive;
  memory::desc src, weights, dst, scratchpad, bias;
  uint64_t id = detail::new_primitive_id();
};

struct PrimitiveShape {
  Precision p = Precision::fp32;
  int64_t m = 0, n = 0, k = 0, ldx = 0, ldy = 0;
  float beta = 0.0f;
  bool bias = false;
};

// The primitive's description (its layouts), not yet the generated code.
dnnl::matmul::primitive_desc describe_primitive(const PrimitiveShape& s) {
  const bool int8 = s.p == Precision::int8;
  const memory::desc src({s.m, s.k}, input_type(s.p), memory::dims{s.ldx, 1});
  const memory::desc wei({s.k, s.n}, input_type(s.p), memory::format_tag::any);
  const memory::desc dst = int8 ? memory::desc({s.m, s.n}, memory::data_type::s32, memory::dims{s.n, 1})
                                : memory::desc({s.m, s.n}, memory::data_type::f32, memory::dims{s.ldy, 1});
  const memory::desc bias = s.bias ? memory::desc({1, s.n}, memory::data_type::f32, memory::format_tag::ab)
                                   : memory::desc();
  const dnnl::primitive_attr attr = detail::matmul_attr(int8 ? 0.0f : s.beta);
  try {
    const dnnl::matmul::desc d =
        s.bias ? dnnl::matmul::desc(src, wei, bias, dst) : dnnl::matmul::desc(src, wei, dst);
    return dnnl::matmul::primitive_desc(d, attr, engine());
  } catch (const dnnl::error& e) {
    fail("gemm_packed: oneDNN matmul (", precision_name(s.p), ") unavailable for m=", s.m, " n=", s.n, " k=", s.k,
         ": ", e.what());
  }
}

PackedPrimitive create_primitive(const PrimitiveShape& s) {
  const dnnl::matmul::primitive_desc pd = describe_primitive(s);
  return {dnnl::matmul(pd), pd.src_desc(), pd.weights_desc(), pd.dst_desc(), pd.scratchpad_desc(),
          s.bias ? pd.bias_desc() : memory::desc()};
}

// fp32 where oneDNN runs the batches: W reordered into the layout oneDNN's f32 matmul asks for
// (BA16a64b on AVX-512, whatever the rows), so that no call packs it again.
void reorder_f32(PackedWeight& pw, const float* w, int64_t ldw) {
  const memory::desc layout =
      describe_primitive({Precision::fp32, kOnednnRowBlock, pw.n, pw.k, pw.k, pw.n}).weights_desc();
  memory plain(memory::desc({pw.k, pw.n}, memory::data_type::f32, memory::dims{1, ldw}), engine(),
               const_cast<float*>(w));
  memory packed(layout, engine());
  dnnl::reorder(plain, packed).execute(stream(), plain, packed);
  stream().wait();
  pw.layouts.emplace_back(layout, packed);
}

}  // namespace

std::shared_ptr<const PackedWeight> pack_weight(Precision p, const float* w, int64_t n, int64_t k, int64_t ldw) {
  check(n >= 1 && k >= 1 && ldw >= k, "pack_weight: bad weight n=", n, " k=", k, " ldw=", ldw);
  auto pw = std::make_shared<PackedWeight>();
  pw->precision = p;
  pw->n = n;
  pw->k = k;
  const WeightPlan plan = plan_weight(p, n, k);
  if (p == Precision::fp32 && plan.f32_panels_first) {
    pw->f32 = pack_f32_panels(w, n, k, ldw);
    pw->f32_panels_first = true;
  } else if (p == Precision::fp32) {
    reorder_f32(*pw, w, ldw);
  } else if (p == Precision::int8) {
    pw->s8.resize(n * k);
    pw->scales.resize(n);
    quantize_rows_s8(w, n, k, ldw, pw->s8.data(), pw->scales.data(), int8_weight_max());
    if (plan.s8_panels) {  // the panels replace the row-major copy
      pw->panels = pack_s8_panels(pw->s8.data(), n, k);
      pw->s8 = {};
    }
  } else if (plan.stored == OperandType::bf16) {
    pw->bf16.resize(n * k);
    for_each_index(n, n * k >= (1 << 16), [&](int64_t r) {
      for (int64_t j = 0; j < k; ++j) pw->bf16[r * k + j] = float_to_bf16(w[r * ldw + j]);
    });
  } else {
    pw->bf16_f32.resize(n * k);
    for (int64_t r = 0; r < n; ++r) round_through_bf16(w + r * ldw, pw->bf16_f32.data() + r * k, k);
  }
  return pw;
}

Precision packed_precision(const PackedWeight& w) { return w.precision; }
int64_t packed_weight_bytes(const PackedWeight& w) { return w.bytes(); }

int int8_weight_max() { return cpu_has_int8_dot() ? 127 : 63; }

namespace {

std::shared_ptr<const PackedPrimitive> cached_primitive(PrimitiveShape s) {
  static std::mutex mutex;
  static std::map<std::array<int64_t, 9>, std::shared_ptr<const PackedPrimitive>> cache;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (s.p == Precision::int8) s.ldy = s.n, s.beta = 0.0f;  // int8 writes dense s32 sums
  if (s.p != Precision::fp32) s.ldx = s.k;                   // bf16 and int8 x is a dense copy
  const std::array<int64_t, 9> key{static_cast<int64_t>(s.p), s.m, s.n, s.k, s.ldx, s.ldy,
                                   std::bit_cast<int32_t>(s.beta), s.bias, threads};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 1024) cache.clear();  // sentence lengths vary: start over past 1024 shapes
  auto entry = std::make_shared<const PackedPrimitive>(create_primitive(s));
  cache.emplace(key, entry);
  return entry;
}

// Per-thread buffers, grown on demand and reused.
template <typename T>
T* thread_buffer(int slot, size_t count) {
  thread_local std::array<std::vector<T>, 3> buffers;
  std::vector<T>& b = buffers[slot];
  if (b.size() < count) b.resize(count);
  return b.data();
}

void run(const PackedPrimitive& pp, const PackedWeight& w, const void* src, void* dst,
         const float* bias = nullptr) {
  const memory& weights = w.in_layout(pp.weights);
  void* scratch = thread_buffer<char>(0, std::max<size_t>(pp.scratchpad.get_size(), 1));
  const detail::PrimitiveArg args[] = {{DNNL_ARG_SRC, &pp.src, src},
                                       {DNNL_ARG_WEIGHTS, nullptr, nullptr, &weights},
                                       {DNNL_ARG_DST, &pp.dst, dst},
                                       {DNNL_ARG_SCRATCHPAD, &pp.scratchpad, scratch},
                                       {DNNL_ARG_BIAS, &pp.bias, bias}};
  detail::execute_primitive(pp.id, pp.primitive, std::span(args).first(bias ? 5 : 4));  // the bias last
}

}  // namespace

ProductPlan plan_packed(const PackedGemmArgs& g, const PackedWeight& w) {
  if (w.precision == Precision::int8 && g.kernel) return forced_plan(ProductClass::frozen_weight, *g.kernel);
  return plan_product({.cls = ProductClass::frozen_weight, .precision = w.precision, .m = g.m, .n = w.n, .k = w.k});
}

bool uses_s8_gemv(const PackedGemmArgs& g, const PackedWeight& w) {
  return w.precision == Precision::int8 && s8_gemv_available() && plan_packed(g, w).kernel == Kernel::s8_rows;
}

namespace {

// y = s_x s_w acc + beta y through the VNNI kernel (include/attn/kernels/gemm_s8_gemv.h).
void gemm_packed_vnni(const PackedGemmArgs& g, const PackedWeight& w) {
  const S8Panels& p = w.panels;
  uint8_t* xu = reinterpret_cast<uint8_t*>(thread_buffer<char>(1, g.m * p.k4));
  float* sx = thread_buffer<float>(2, g.m);
  quantize_rows_u8(g.x, g.m, p.k, g.ldx, xu, p.k4, sx);
  gemm_s8_gemv({g.m, xu, p.k4, sx, w.scales.data(), g.beta, g.y, g.ldy, g.bias}, p);
}

// y (+)= x W^T with W in bf16 (no bias: gemm_packed puts it in y first), x rounded to bf16 (kept as
// f32 where the plan multiplies bf16 values in f32: oneDNN has no bf16 matmul).
void gemm_packed_bf16(const PackedGemmArgs& g, const PackedWeight& w, const ProductPlan& plan) {
  const int64_t m = g.m, n = w.n, k = w.k;
  if (plan.kernel == Kernel::f32_of_bf16) {
    // f32 products of the rounded values through attn::gemm, whose dispatch suits every m
    // (gemm_few_rows for decoding, dnnl_sgemm for large m) better than the matmul primitive
    float* x = thread_buffer<float>(1, m * k);
    if (g.ldx == k) {
      round_through_bf16(g.x, x, m * k);  // in parallel when large
    } else {
      for (int64_t r = 0; r < m; ++r) round_through_bf16(g.x + r * g.ldx, x + r * k, k);
    }
    return gemm({false, true, m, n, k, 1.0f, g.beta, x, k, w.bf16_f32.data(), k, g.y, g.ldy});
  }
  uint16_t* x16 = thread_buffer<uint16_t>(1, m * k);
  if (g.ldx == k) {
    round_to_bf16(g.x, x16, m * k);
  } else {
    for (int64_t r = 0; r < m; ++r) round_to_bf16(g.x + r * g.ldx, x16 + r * k, k);
  }
  // the rows in a multiple of 64 and the rest apart (onednn_rows.h)
  const int64_t head = onednn_head_rows(m);
  run(*cached_primitive({w.precision, head, n, k, k, g.ldy, g.beta}), w, x16, g.y);
  if (head < m)
    run(*cached_primitive({w.precision, m - head, n, k, k, g.ldy, g.beta}), w, x16 + head * k, g.y + head * g.ldy);
}

// y = x W^T (+ bias) + beta y in f32, W in oneDNN's layout, x read in place: in row pieces
// (gemm_backends.h, as attn::gemm's matmul), so that a decoding batch that gains and loses rows
// at every step meets a few primitives per doubling of its rows.
void gemm_packed_f32(const PackedGemmArgs& g, const PackedWeight& w) {
  for (int64_t done = 0; done < g.m;) {
    const int64_t rows = detail::row_piece(g.m - done);
    run(*cached_primitive({Precision::fp32, rows, w.n, w.k, g.ldx, g.ldy, g.beta, g.bias != nullptr}), w,
        g.x + done * g.ldx, g.y + done * g.ldy, g.bias);
    done += rows;
  }
}

}  // namespace

void gemm_packed(const PackedGemmArgs& g, const PackedWeight& w) {
  const int64_t m = g.m, n = w.n, k = w.k;
  check(m >= 0 && g.ldx >= k && g.ldy >= n, "gemm_packed: bad arguments m=", m, " ldx=", g.ldx,
        " ldy=", g.ldy, " for weight [", n, ", ", k, "]");
  check(g.kernel != Kernel::s8_rows || (w.precision == Precision::int8 && s8_gemv_available()),
        "gemm_packed: the VNNI kernel needs an int8 weight and a CPU built for AVX512-VNNI");
  check(g.bias == nullptr || g.beta == 0.0f, "gemm_packed: a bias replaces beta y (beta must be 0, got ", g.beta, ")");
  if (m == 0) return;
  const ProductPlan plan = plan_packed(g, w);
  if (w.precision == Precision::int8 && plan.kernel == Kernel::s8_rows) return gemm_packed_vnni(g, w);
  if (w.precision == Precision::fp32) {  // the plan's layout; for rows it gives neither, the first made
    const Kernel kernel = plan.kernel;
    if (kernel == Kernel::f32_panels || (kernel != Kernel::onednn_f32 && w.f32_panels_first))
      return gemm_f32_panels(m, g.x, g.ldx, w.f32_panels(), g.beta, g.y, g.ldy, g.bias);
    return gemm_packed_f32(g, w);
  }
  if (w.precision == Precision::bf16 && g.bias != nullptr) {  // y = bias, then y += x W^T
    for (int64_t r = 0; r < m; ++r) std::copy(g.bias, g.bias + n, g.y + r * g.ldy);
    PackedGemmArgs h = g;
    h.bias = nullptr;
    h.beta = 1.0f;
    return gemm_packed(h, w);
  }
  if (w.precision == Precision::bf16) return gemm_packed_bf16(g, w, plan);
  // int8 through oneDNN: m rounded up with zero rows (s8_padded_rows), so that a decoding batch
  // that shrinks as sentences finish reuses a few primitives instead of creating one per row
  // count (0.3-1.4 ms each), and large products avoid the row counts oneDNN runs slowly. Integer
  // sums are exact: the real rows are unchanged.
  const int64_t mp = s8_padded_rows(m);
  int8_t* xq = reinterpret_cast<int8_t*>(thread_buffer<char>(1, mp * k));
  float* sx = thread_buffer<float>(2, m);
  quantize_rows_s8(g.x, m, k, g.ldx, xq, sx);
  std::fill(xq + m * k, xq + mp * k, int8_t{0});
  // a block of rows at a time, so that its s32 sums are still in cache when dequantize_rows reads them
  const int64_t block = s8_row_block(mp, n);
  int32_t* acc = thread_buffer<int32_t>(0, block * n);  // block <= mp
  for (int64_t r0 = 0; r0 < m; r0 += block) {
    const int64_t rows = std::min(block, mp - r0);
    run(*cached_primitive({w.precision, rows, n, k, k, g.ldy, g.beta}), w, xq + r0 * k, acc);
    dequantize_rows(std::min(rows, m - r0), n, acc, sx + r0, w.scales.data(), g.bias, g.beta, g.y + r0 * g.ldy,
                    g.ldy);
  }

}

}  // namespace attn
