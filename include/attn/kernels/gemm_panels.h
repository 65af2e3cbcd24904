// x W^T in fp32 with W packed once into panels (inference: decoding steps of a few dozen rows):
//   y[i, j] = sum_k x[i, k] W[j, k] + beta y[i, j],   i < m, j < n,   W [n, k] (PyTorch's [out, in])
// Panel p holds W's rows 16p .. 16p+15 as k groups of 16 floats (zeros past n), so that one
// k step of a tile loads 2 vectors of W and broadcasts 6 values of x into 12 accumulators
// (6 rows x 16 outputs: the AVX2 microkernel of BLIS and oneDNN). A tile runs k in blocks of
// kPanelDepth (its slice of the panel, 16 KB, stays in L1 for the tile's rows), each output a
// single chain of FMAs in k order; the panels are split among the threads.
//
// Why: at 12-48 rows (a decoding step of a batch of sentences, or of a beam over a few, or a
// 16-row block of the output layer) oneDNN repacks W at every call, and packing costs about as
// much as the arithmetic on it; here W is packed once (PackedWeights). Measured against gemm()
// (oneDNN's matmul primitive up to m = 32, dnnl_sgemm past it; 2 threads, Zen 3, weights streamed
// from memory): 1.05-1.45x at m = 24 and 32, 1.0-1.07x at 64 and 128 (so gemm_packed takes it up
// to kPanelRowsMax only). Below 17 rows gemm() is gemm_few_rows, which sums each output's lanes:
// the panels 1.1-1.5x it at 12 and 16 rows, behind it at 8 and fewer (8000 x 512, one thread, AVX2
// held on a Zen 5: ATTN_ISA=avx2).
// Details: docs/performance.md.
// On AVX-512 (one vector a panel row, tiles of up to 12 rows against one panel, each thread's
// panels read as one stream) the dispatch table gives the panels the products of 2-8 rows of a W
// of 512 x 512 and more: there, with W read from memory, they ran 1.1-1.9x oneDNN's matmul on its
// packed W (the base model's shapes, 2 threads, Zen 5); from 16 rows on, or with W in the cache,
// oneDNN is ahead. Runs where f32_panels_available() (AVX2 + FMA or AVX-512, kernels/cpu.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace attn {

inline constexpr int64_t kPanelWidth = 16;   // outputs per panel
inline constexpr int64_t kPanelDepth = 256;  // k per block of a tile
// The rows gemm_packed gives to the panels in fp32 (fewer go to gemm_few_rows, more to oneDNN).
inline constexpr int64_t kPanelRowsMin = 12, kPanelRowsMax = 48;

bool f32_panels_available();

struct F32Panels {
  int64_t n = 0, k = 0;
  std::unique_ptr<float[]> data;  // [ceil(n / 16), k, 16]
};

// W [n, k] with row stride ldw, packed.
F32Panels pack_f32_panels(const float* w, int64_t n, int64_t k, int64_t ldw);
// The packed W back as [n, k], row-major.
std::vector<float> unpack_f32_panels(const F32Panels& p);

// y = x W^T + beta y (beta 0: y is not read); x [m, k] with row stride ldx, y [m, n] with ldy.
// With a bias [n] (beta must be 0), y = x W^T + bias: the bits of y holding the bias with beta 1.
void gemm_f32_panels(int64_t m, const float* x, int64_t ldx, const F32Panels& w, float beta, float* y, int64_t ldy,
                     const float* bias = nullptr);

}  // namespace attn
