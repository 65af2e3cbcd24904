// The compute-precision setting (include/attn/kernels/precision.h).
#include "attn/kernels/precision.h"

#include <algorithm>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "attn/error.h"

namespace attn {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::bf16: return "bf16";
    case Precision::int8: return "int8";
  }
  return "?";
}

Precision parse_precision(std::string_view name, std::string_view what) {
  for (Precision p : {Precision::fp32, Precision::bf16, Precision::int8})
    if (name == precision_name(p)) return p;
  fail(std::string(what), ": unknown precision '", std::string(name), "' (expected fp32, bf16 or int8)");
}

std::vector<Precision> parse_precision_list(std::string_view list, std::string_view what) {
  std::vector<Precision> out;
  for (size_t start = 0; start <= list.size();) {
    size_t end = std::min(list.find(',', start), list.size());
    out.push_back(parse_precision(list.substr(start, end - start), what));
    start = end + 1;
  }
  return out;
}

bool cpu_has_native_bf16() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

bool onednn_has_bf16_matmul() {
  static const bool available = [] {
    using dnnl::memory;
    const memory::desc a({2, 2}, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc c({2, 2}, memory::data_type::f32, memory::format_tag::ab);
    try {
      dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, a, c), engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

bool cpu_has_int8_dot() {
  // asked once: every int8 product asks (uses_s8_gemv)
  static const bool available = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512_vnni = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_vnni);
    const auto avx2_vnni = static_cast<unsigned>(dnnl::cpu_isa::avx2_vnni);
    // the ISA values are masks of features: each includes the bits of the ISAs below it
    return (isa & avx512_vnni) == avx512_vnni || (isa & avx2_vnni) == avx2_vnni;
  }();
  return available;
}

Precision parse_training_precision(std::string_view name, std::string_view what) {
  if (name == "auto") return cpu_has_native_bf16() ? Precision::bf16 : Precision::fp32;
  const Precision p = parse_precision(name, what);
  check(p != Precision::int8, std::string(what), ": int8 is for inference only (fp32, bf16 or auto)");
  return p;
}

}  // namespace attn
