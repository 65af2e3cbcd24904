// What a program sets once for its whole process: the threads attn's matrix products and loops
// use, and the flushing of denormal floats. Programs call these instead of the kernels' headers,
// which change with the kernels.
#pragma once

namespace attn {

// Most threads a program may ask for: more than any machine attn runs on has cores, few enough
// to catch a typo or an overflowed number.
constexpr int kMaxThreads = 1024;

// Threads for the calling thread and those it starts afterwards (OpenMP's count, which oneDNN
// follows); n outside 1..kMaxThreads is an attn::Error naming it. Without a call: OMP_NUM_THREADS
// if set, else all cores.
void set_threads(int n);
int threads();

// Flushes denormal floats to zero on the calling thread and OpenMP's workers: a GEMM over them
// runs about 50x slower (attn/kernels/denormals.h has the measurements). Call once at start-up.
void flush_denormals_everywhere();

// For a process that computes batches of every shape for hours (attn serve): keeps its memory at
// a steady size. glibc serves blocks of 128 KiB and more by mmap, returned on free, at a fixed
// threshold (by default it raises the threshold each time such a block is freed, after which
// blocks of every size come from the heaps and fragment them: measured, 66 MiB of free heap kept
// after 10,000 requests); each thread's heap keeps up to 16 MiB free at its top (not 128 KiB), so
// that small blocks freed and taken again at every step are not returned and faulted in anew;
// and attn's cache of freed tensor blocks holds no more than the most
// ever in use at once (set_storage_cache_floor(0), attn/tensor/tensor.h). Call once at start-up,
// before the threads start.
void steady_memory();

}  // namespace attn
