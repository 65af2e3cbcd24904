// describe_runtime (include/attn/kernels/runtime_info.h).
#include "attn/kernels/runtime_info.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <fstream>

#include "attn/kernels/gemm.h"
#include "attn/kernels/precision.h"

namespace attn {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

const char* kernel_isa() {
#if defined(__AVX512F__)
  return "avx512 (compiled in)";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2 (compiled in)";
#else
  return "generic (compiled in)";
#endif
}

}  // namespace

std::string describe_runtime() {
  const dnnl_version_t* v = dnnl_version();
  std::string out;
  out += "attn: 0.1.0\n";
  out += "cpu: " + cpu_model() + "\n";
  out += std::string("kernels: ") + kernel_isa() + "\n";
  out += "oneDNN: " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (cpu runtime " + (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other") + ")\n";
  out += "threads: " + std::to_string(num_threads()) + "\n";
  out += std::string("bf16 products: ") +
         (cpu_has_native_bf16() ? "native" : onednn_has_bf16_matmul() ? "oneDNN, emulated" : "none: bf16 values multiplied in f32") +
         "\n";
  out += std::string("int8 products: ") + (cpu_has_int8_dot() ? "VNNI (s32 sums)" : "no VNNI: 7-bit weights, s16 pair sums") +
         "\n";
  return out;
}

}  // namespace attn
