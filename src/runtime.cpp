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
  set_storage_cache_floor(0);
}

}  // namespace attn
