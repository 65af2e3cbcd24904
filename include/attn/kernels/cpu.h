// The CPU attn runs on, and the instruction set its hand-written kernels use there.
//
// Each SIMD kernel (vexp, attend_rows, gemm_small, gemm_few_rows, gemm_panels, gemm_s8_gemv,
// quantize_s8, dropout_bits, adam_update) is written once, over a small vector type whose AVX2 and
// AVX-512 forms have the same members, and compiled once per Isa in translation units of their
// own built with those instructions enabled (src/kernels/avx2/, src/kernels/avx512/), whatever
// the flags of the rest of the library. The
// form that runs is chosen once, at start-up, from cpuid: the best the CPU and the OS support. So a
// portable build (-march=x86-64-v2, what a package ships) runs the AVX2 kernels on an AVX2 CPU and
// the AVX-512 ones on an AVX-512 CPU, and a native build goes through the same choice.
//
// The environment variable ATTN_ISA=generic|avx2|avx512 lowers the choice (for tests and
// benchmarks: the plain loops, or the AVX2 kernels on an AVX-512 CPU); a value above what the CPU
// has is capped to it, an unknown value is an error. It is read here only, once.
#pragma once

#include <string>
#include <string_view>

namespace attn {

// generic: plain C++ loops (any x86-64); avx2: AVX2 + FMA + F16C; avx512: AVX-512 F, BW, DQ, VL.
enum class Isa { generic = 0, avx2 = 1, avx512 = 2 };

// What cpuid reports, with the OS's support for the wider registers (xgetbv) folded in: avx2 is
// false when the OS does not save the ymm registers, avx512* when it does not save the zmm and
// mask registers, amx_* when it does not enable the tile registers.
struct CpuFeatures {
  bool sse42 = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool avx512_vnni = false, avx512_bf16 = false, avx_vnni = false;
  bool amx_tile = false, amx_bf16 = false, amx_int8 = false;
  std::string vendor;  // "GenuineIntel", "AuthenticAMD"
  std::string model;   // the brand string, "AMD EPYC 7B13 64-Core Processor"
};

// Read once (cpuid and xgetbv), then cached.
const CpuFeatures& cpu_features();

// The best Isa the features allow.
Isa best_isa(const CpuFeatures& f);

// The Isa the kernels use: best_isa(cpu_features()), lowered by ATTN_ISA. Chosen at the first
// call; throws attn::Error naming the value when ATTN_ISA is not generic, avx2 or avx512.
Isa active_isa();

const char* isa_name(Isa isa);
// "generic", "avx2" or "avx512"; throws attn::Error naming `what` and the value otherwise.
Isa parse_isa(std::string_view name, std::string_view what);
// The Isa an ATTN_ISA value (null or empty: unset) selects on a CPU whose best is `best`.
Isa isa_from_setting(const char* value, Isa best);

// Several lines for `attn info`: the CPU's model, its SIMD features, and the Isa chosen (and how).
std::string cpu_description();

// Test-only: makes the kernels use `isa` from now on (throws when the CPU lacks it); returns the
// Isa used before. Not thread-safe against running kernels.
Isa set_active_isa_for_testing(Isa isa);

}  // namespace attn
