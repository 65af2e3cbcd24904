// oneDNN behind attn::gemm: dnnl_sgemm, and matmul primitives (f32 or bf16 inputs, optionally
// batched) created once per shape and kept in a cache, since creating one costs ~0.5 ms.
//
// Debian's oneDNN is built with OpenMP (libgomp): it runs on the same threads as attn's own
// `#pragma omp` loops, takes omp_get_max_threads() of them, and only one inside a parallel region.
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>
#include <oneapi/dnnl/dnnl.hpp>

#include "attn/error.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/precision.h"
#include "gemm_backends.h"

namespace attn::detail {

dnnl::engine& onednn_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

uint64_t new_primitive_id() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

void execute_primitive(uint64_t id, const dnnl::primitive& primitive, std::span<const PrimitiveArg> args) {
  // Bounded like the primitive caches (1024 shapes each): past 2048 primitives, a thread starts over.
  thread_local std::unordered_map<uint64_t, std::vector<dnnl::memory>> held;
  thread_local dnnl::stream stream(onednn_engine());
  if (held.size() >= 2048 && !held.contains(id)) held.clear();
  std::vector<dnnl::memory>& mine = held[id];
  size_t bound = 0;
  for (const PrimitiveArg& a : args) bound += a.memory == nullptr;
  const bool make = mine.size() != bound;
  if (make) mine.clear();
  std::array<dnnl_exec_arg_t, 8> c_args{};
  check(args.size() <= c_args.size(), "execute_primitive: ", args.size(), " arguments, at most ", c_args.size());
  size_t n = 0, i = 0;
  for (const PrimitiveArg& a : args) {
    void* data = const_cast<void*>(a.data);
    const dnnl::memory* m = a.memory;
    if (m == nullptr) {
      if (make) mine.emplace_back(*a.desc, onednn_engine(), data);
      else mine[i].set_data_handle(data);
      m = &mine[i++];
    }
    c_args[n++] = {a.arg, m->get()};
  }
  const dnnl_status_t st = dnnl_primitive_execute(primitive.get(), stream.get(), static_cast<int>(n), c_args.data());
  check(st == dnnl_success, "gemm: a oneDNN primitive failed with status ", static_cast<int>(st));
  stream.wait();
}

void gemm_onednn(const GemmArgs& g) {
  const dnnl_status_t st =
      dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.m, g.n, g.k, g.alpha, g.a, g.lda,
                 g.b, g.ldb, g.beta, g.c, g.ldc);
  check(st == dnnl_success, "gemm: dnnl_sgemm failed with status ", static_cast<int>(st),
        " for m=", g.m, " n=", g.n, " k=", g.k, " lda=", g.lda, " ldb=", g.ldb, " ldc=", g.ldc);
}

namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() { return onednn_engine(); }

// Everything a primitive depends on: the call without its pointers, plus the thread count it
// was created for (oneDNN partitions the work at creation).
using MatmulKey = std::array<int64_t, 17>;

MatmulKey key_of(const MatmulCall& c) {
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  return {c.bf16,     c.trans_a,  c.trans_b, c.batch, c.m, c.n, c.k, c.lda, c.ldb, c.ldc,
          c.stride_a, c.stride_b, c.stride_c, std::bit_cast<int32_t>(c.alpha),
          std::bit_cast<int32_t>(c.beta), threads, c.bias != nullptr};
}

// [batch, rows, cols] over memory with leading dimension ld; `transposed` means the stored
// matrix is [cols, rows]. A zero batch stride broadcasts one matrix over the batch.
memory::desc matrix_desc(memory::data_type dt, int64_t batch, int64_t rows, int64_t cols,
                         int64_t ld, int64_t stride, bool transposed) {
  const int64_t row_stride = transposed ? 1 : ld, col_stride = transposed ? ld : 1;
  if (batch == 1) return memory::desc({rows, cols}, dt, memory::dims{row_stride, col_stride});
  const int64_t b = stride == 0 ? 1 : batch;
  return memory::desc({b, rows, cols}, dt,
                      memory::dims{stride == 0 ? rows * cols : stride, row_stride, col_stride});
}

struct MatmulEntry {
  dnnl::matmul primitive;
  memory::desc a, b, c, scratchpad, bias;
  uint64_t id = new_primitive_id();
};

MatmulEntry create_matmul(const MatmulCall& c) {
  const auto in = c.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  const auto f32 = memory::data_type::f32;
  const memory::desc a = matrix_desc(in, c.batch, c.m, c.k, c.lda, c.stride_a, c.trans_a);
  const memory::desc b = matrix_desc(in, c.batch, c.k, c.n, c.ldb, c.stride_b, c.trans_b);
  const memory::desc d = matrix_desc(f32, c.batch, c.m, c.n, c.ldc, c.stride_c, false);
  // the bias: one row, broadcast over the rows and the batch
  const memory::desc bias = c.batch == 1 ? memory::desc({1, c.n}, f32, memory::format_tag::ab)
                                         : memory::desc({1, 1, c.n}, f32, memory::format_tag::abc);
  dnnl::primitive_attr attr = matmul_attr(c.beta);
  if (c.alpha != 1.0f) attr.set_output_scales(0, {c.alpha});
  try {
    const dnnl::matmul::desc desc = c.bias ? dnnl::matmul::desc(a, b, bias, d) : dnnl::matmul::desc(a, b, d);
    dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
    return {dnnl::matmul(pd), pd.src_desc(), pd.weights_desc(), pd.dst_desc(), pd.scratchpad_desc(),
            c.bias ? pd.bias_desc() : memory::desc()};
  } catch (const dnnl::error& e) {
    fail("gemm: oneDNN matmul (", c.bf16 ? "bf16" : "f32", ") unavailable for batch=", c.batch,
         " m=", c.m, " n=", c.n, " k=", c.k, " trans_a=", c.trans_a, " trans_b=", c.trans_b, ": ",
         e.what());
  }
}

// Shapes vary with sentence lengths: past kMaxCached distinct ones the cache starts over.
constexpr size_t kMaxCached = 1024;

std::shared_ptr<const MatmulEntry> cached_matmul(const MatmulCall& c) {
  static std::mutex mutex;
  static std::map<MatmulKey, std::shared_ptr<const MatmulEntry>> cache;
  const MatmulKey key = key_of(c);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxCached) cache.clear();
  auto entry = std::make_shared<const MatmulEntry>(create_matmul(c));
  cache.emplace(key, entry);
  return entry;
}

// Per-thread scratch space for the primitives, grown on demand and reused.
void* scratchpad(size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.bytes < bytes) {
    std::free(buffer.data);
    buffer.bytes = (bytes + 4095) / 4096 * 4096;
    buffer.data = std::aligned_alloc(4096, buffer.bytes);
    check(buffer.data != nullptr, "gemm: cannot allocate ", buffer.bytes, " bytes of scratchpad");
  }
  return buffer.data;
}

// Elements from the first to the last one of `batch` stored [rows, cols] matrices (transposed:
// [cols, rows]) with leading dimension ld, batch stride `stride` (0: one matrix for all).
int64_t span(int64_t batch, int64_t rows, int64_t cols, int64_t ld, int64_t stride, bool transposed) {
  const int64_t one = transposed ? (cols - 1) * ld + rows : (rows - 1) * ld + cols;
  return batch > 1 && stride != 0 ? (batch - 1) * stride + one : one;
}

// `count` bf16 values from src widened to f32 in a per-thread buffer (slot 0: A, 1: B).
const float* widened(const void* src, int64_t count, int slot) {
  thread_local std::vector<float> buffers[2];
  std::vector<float>& b = buffers[slot];
  if (b.size() < static_cast<size_t>(count)) b.resize(count);
  bf16_to_f32(static_cast<const uint16_t*>(src), b.data(), count);
  return b.data();
}

}  // namespace

// The rows of the first piece of an m-row product: m itself up to 16, else the largest multiple of
// a quarter of the power of two below m (16, 20, 24, 28, 32, 40, ..., 96, 112, 128, 160, ...), at
// least 4/5 of m. A primitive is made per row count (creating one costs ~0.5 ms and holds its
// generated code): decoding, whose batch gains and loses rows at every step, would otherwise make
// one per row count seen, and a server's memory would grow with each new one (measured: 77 -> 141
// MiB over 10,000 requests, docs/serve.md). Cut into pieces of these counts, a weight shape needs
// four primitives per doubling of the rows (eighths: twice as many, and the server's memory grew
// by 13-34% instead of 5-9%); attn translate's speed is unchanged (docs/serve.md).
int64_t row_piece(int64_t m) {
  if (m <= 16) return m;
  const int64_t step = (int64_t{1} << (63 - __builtin_clzll(static_cast<uint64_t>(m)))) / 4;
  return m / step * step;
}

namespace {

void run_matmul(const MatmulCall& c) {
  const std::shared_ptr<const MatmulEntry> held = cached_matmul(c);
  const MatmulEntry& entry = *held;
  const PrimitiveArg args[] = {{DNNL_ARG_SRC, &entry.a, c.a},
                               {DNNL_ARG_WEIGHTS, &entry.b, c.b},
                               {DNNL_ARG_DST, &entry.c, c.c},
                               {DNNL_ARG_SCRATCHPAD, &entry.scratchpad, scratchpad(entry.scratchpad.get_size())},
                               {DNNL_ARG_BIAS, &entry.bias, c.bias}};
  execute_primitive(entry.id, entry.primitive, std::span(args).first(c.bias ? 5 : 4));  // the bias last
}

}  // namespace

void matmul_onednn(const MatmulCall& c) {
  check(!c.bias || c.alpha == 1.0f, "gemm: a bias with alpha ", c.alpha, " (only 1 is defined)");
  if (c.bf16 && !onednn_has_bf16_matmul()) {
    // No bf16 matmul in oneDNN on this CPU: the same bf16 inputs, widened (exactly) to f32,
    // multiplied and accumulated in f32.
    MatmulCall f = c;
    f.bf16 = false;
    f.a = widened(c.a, span(c.batch, c.m, c.k, c.lda, c.stride_a, c.trans_a), 0);
    f.b = widened(c.b, span(c.batch, c.k, c.n, c.ldb, c.stride_b, c.trans_b), 1);
    return matmul_onednn(f);
  }
  if (c.batch != 1) return run_matmul(c);
  // One product in row pieces (row_piece), each in place: row i of C depends on row i of A alone.
  const int64_t element = c.bf16 ? 2 : 4;
  for (int64_t done = 0; done < c.m;) {
    MatmulCall piece = c;
    piece.m = row_piece(c.m - done);
    piece.a = static_cast<const char*>(c.a) + (c.trans_a ? done : done * c.lda) * element;
    piece.c = c.c + done * c.ldc;
    run_matmul(piece);
    done += piece.m;
  }
}

}  // namespace attn::detail
