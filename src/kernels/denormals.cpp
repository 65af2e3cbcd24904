#include "attn/kernels/denormals.h"

#include <omp.h>
#include <xmmintrin.h>

namespace attn {

namespace {

constexpr unsigned kFlushToZero = 1u << 15;     // MXCSR.FTZ: denormal results become 0
constexpr unsigned kDenormalsAreZero = 1u << 6;  // MXCSR.DAZ: denormal inputs read as 0

void set_on_this_thread(bool on) {
  const unsigned bits = kFlushToZero | kDenormalsAreZero;
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | bits) : (csr & ~bits));
}

}  // namespace

void flush_denormals(bool on) {
  set_on_this_thread(on);
#pragma omp parallel
  set_on_this_thread(on);
}

bool flushing_denormals() {
  const unsigned bits = kFlushToZero | kDenormalsAreZero;
  return (_mm_getcsr() & bits) == bits;
}

}  // namespace attn
