#include "attn/runtime.h"

#include <malloc.h>

#include "attn/error.h"
#include "attn/kernels/denormals.h"
#include "attn/kernels/gemm.h"
#include "attn/tensor/tensor.h"

namespace attn {

void set_threads(int n) {
  check(n >= 1 && n <= kMaxThreads, "threads must be between 1 and ", kMaxThreads, ", got ", n);
  set_num_threads(n);
}

int threads() { return num_threads(); }

void flush_denormals_everywhere() { flush_denormals(true); }

void steady_memory() {
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);  // setting it turns glibc's moving threshold off
  // A thread's heap keeps up to 16 MiB free at its top instead of glibc's 128 KiB: a stream's
  // blocks of under 128 KiB come and go at every step, and returning them (madvise) only to fault
  // them in again cost a beam-4 server 8% of its throughput (docs/serve.md).
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
  set_storage_cache_floor(0);
}

}  // namespace attn
