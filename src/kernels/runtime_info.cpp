// describe_runtime (include/attn/kernels/runtime_info.h).
#include "attn/kernels/runtime_info.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "attn/kernels/cpu.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/precision.h"

namespace attn {

std::string describe_runtime() {
  const dnnl_version_t* v = dnnl_version();
  std::string out;
  out += "attn: 0.1.0\n";
  out += cpu_description();  // cpu, features, the kernels' instruction set
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
