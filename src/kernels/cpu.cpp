// CPU features from cpuid and the Isa the kernels run (include/attn/kernels/cpu.h).
#include "attn/kernels/cpu.h"

#include <cpuid.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "attn/error.h"

namespace attn {

namespace {

struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned sub) {
  Regs r;
  if (!__get_cpuid_count(leaf, sub, &r.a, &r.b, &r.c, &r.d)) return Regs{};
  return r;
}

bool bit(unsigned reg, int i) { return (reg >> i) & 1u; }

// XCR0: the register state the OS saves on a context switch (0 when the OS does not say).
uint64_t xcr0(bool osxsave) {
  if (!osxsave) return 0;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

std::string brand_string() {
  if (cpuid(0x80000000u, 0).a < 0x80000004u) return "unknown";
  char text[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    const Regs r = cpuid(0x80000002u + i, 0);
    std::memcpy(text + 16 * i, &r, 16);
  }
  std::string s(text);
  const size_t first = s.find_first_not_of(' '), last = s.find_last_not_of(' ');
  return first == std::string::npos ? "unknown" : s.substr(first, last - first + 1);
}

CpuFeatures read_features() {
  CpuFeatures f;
  const Regs v = cpuid(0, 0);
  char vendor[13] = {};
  std::memcpy(vendor, &v.b, 4);
  std::memcpy(vendor + 4, &v.d, 4);
  std::memcpy(vendor + 8, &v.c, 4);
  f.vendor = vendor;
  f.model = brand_string();
  const Regs l1 = cpuid(1, 0), l7 = v.a >= 7 ? cpuid(7, 0) : Regs{}, l71 = v.a >= 7 ? cpuid(7, 1) : Regs{};
  const uint64_t xcr = xcr0(bit(l1.c, 27));
  const bool os_ymm = (xcr & 0x6) == 0x6;     // SSE and AVX state
  const bool os_zmm = (xcr & 0xe6) == 0xe6;   // and the opmask and zmm state
  const bool os_tile = (xcr & 0x60000) == 0x60000;  // the tile config and data
  f.sse42 = bit(l1.c, 20);
  f.avx = bit(l1.c, 28) && os_ymm;
  f.fma = bit(l1.c, 12) && os_ymm;
  f.f16c = bit(l1.c, 29) && os_ymm;
  f.avx2 = bit(l7.b, 5) && os_ymm;
  f.avx_vnni = bit(l71.a, 4) && os_ymm;
  f.avx512f = bit(l7.b, 16) && os_zmm;
  f.avx512dq = bit(l7.b, 17) && os_zmm;
  f.avx512bw = bit(l7.b, 30) && os_zmm;
  f.avx512vl = bit(l7.b, 31) && os_zmm;
  f.avx512_vnni = bit(l7.c, 11) && os_zmm;
  f.avx512_bf16 = bit(l71.a, 5) && os_zmm;
  f.amx_bf16 = bit(l7.d, 22) && os_tile;
  f.amx_tile = bit(l7.d, 24) && os_tile;
  f.amx_int8 = bit(l7.d, 25) && os_tile;
  return f;
}

// -1 until the first active_isa(); then the Isa in use.
std::atomic<int> g_isa{-1};

// Why the Isa in use is what it is, for cpu_description().
std::string g_reason;

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = read_features();
  return features;
}

Isa best_isa(const CpuFeatures& f) {
  if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.avx2 && f.fma && f.f16c) return Isa::avx512;
  if (f.avx2 && f.fma && f.f16c) return Isa::avx2;
  return Isa::generic;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::generic: return "generic";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

Isa parse_isa(std::string_view name, std::string_view what) {
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    if (name == isa_name(isa)) return isa;
  fail(std::string(what), ": unknown instruction set '", std::string(name), "' (expected generic, avx2 or avx512)");
}

Isa isa_from_setting(const char* value, Isa best) {
  if (value == nullptr || *value == '\0') return best;
  const Isa asked = parse_isa(value, "ATTN_ISA");
  return static_cast<int>(asked) < static_cast<int>(best) ? asked : best;
}

Isa active_isa() {
  const int isa = g_isa.load(std::memory_order_relaxed);
  if (isa >= 0) return static_cast<Isa>(isa);
  // The one place ATTN_ISA is read. Racing first calls compute the same value.
  static const Isa chosen = [] {
    const Isa best = best_isa(cpu_features());
    const char* setting = std::getenv("ATTN_ISA");
    const Isa isa = isa_from_setting(setting, best);
    g_reason = setting && *setting ? std::string("ATTN_ISA=") + setting + (isa != parse_isa(setting, "ATTN_ISA")
                                                                              ? ", capped to what the CPU has"
                                                                              : "")
                                   : std::string("the best this CPU supports");
    return isa;
  }();
  int expected = -1;
  g_isa.compare_exchange_strong(expected, static_cast<int>(chosen), std::memory_order_relaxed);
  return static_cast<Isa>(g_isa.load(std::memory_order_relaxed));
}

Isa set_active_isa_for_testing(Isa isa) {
  const Isa before = active_isa();
  check(static_cast<int>(isa) <= static_cast<int>(best_isa(cpu_features())), "set_active_isa_for_testing: this CPU ",
        "has no ", isa_name(isa), " (best: ", isa_name(best_isa(cpu_features())), ")");
  g_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  g_reason = "set by a test";
  return before;
}

std::string cpu_description() {
  const CpuFeatures& f = cpu_features();
  const Isa isa = active_isa();
  std::ostringstream s;
  s << "cpu: " << f.model << " (" << f.vendor << ")\n";
  s << "features:";
  const std::pair<const char*, bool> named[] = {
      {"sse4.2", f.sse42},           {"avx", f.avx},
      {"avx2", f.avx2},              {"fma", f.fma},
      {"f16c", f.f16c},              {"avx_vnni", f.avx_vnni},
      {"avx512f", f.avx512f},        {"avx512bw", f.avx512bw},
      {"avx512dq", f.avx512dq},      {"avx512vl", f.avx512vl},
      {"avx512_vnni", f.avx512_vnni}, {"avx512_bf16", f.avx512_bf16},
      {"amx_tile", f.amx_tile},      {"amx_bf16", f.amx_bf16},
      {"amx_int8", f.amx_int8}};
  for (const auto& [name, on] : named)
    if (on) s << ' ' << name;
  s << "\nkernels: " << isa_name(isa) << " (" << g_reason << "; best "
    << isa_name(best_isa(f)) << ")\n";
  return s.str();
}

}  // namespace attn
