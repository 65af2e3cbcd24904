// The int8 product for few rows (decoding, m = 1..beam*batch), by a hand-written AVX-512 VNNI
// kernel (vpdpbusd) instead of oneDNN, whose per-call cost dominates at small m:
//   y[i, j] = (s_x[i] s_w[j]) acc[i, j] + beta y[i, j],   acc = x_q W_q^T exact in s32
// with x_q, W_q, s_x, s_w as in include/attn/kernels/gemm_int8.h (the same formula and f32
// operations as its oneDNN path, so both give the same bits).
//
// The weight is kept in "VNNI panels": columns in panels of 16, k in steps of 4 bytes,
//   panel[p][s][c][t] = W_q[16 p + c, 4 s + t]   (zero past n and past k)
// 64 bytes per (panel, step): one vpdpbusd multiplies them by 4 bytes of an x row broadcast to
// the 16 lanes, adding to 16 column sums (no horizontal reduction). Panels are grouped by 4
// (64 columns) and interleaved step by step within a group, so a group is one contiguous stream.
// vpdpbusd multiplies u8 by s8: x rows are stored as u = q + 128 (u8) and
//   acc[i, j] = sum_k u[i, k] W_q[j, k] - comp[j],   comp[j] = 128 sum_k W_q[j, k]
// Runs on CPUs with AVX-512 and AVX512-VNNI (active_isa() avx512, kernels/cpu.h), or on AVX2
// CPUs without VNNI, where weights are 7-bit (int8_weight_max() 63) and vpmaddubsw + vpmaddwd give
// the same exact sums; s8_gemv_available() says whether it runs here (otherwise gemm_packed keeps
// oneDNN for every m).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace attn {

bool s8_gemv_available();

// A weight W_q [n, k] in VNNI panels, with its compensation.
struct S8Panels {
  int64_t n = 0, k = 0;
  int64_t k4 = 0;  // k rounded up to a multiple of 4: the row stride of the u8 x rows
  struct Free {
    void operator()(int8_t* p) const;
  };
  std::unique_ptr<int8_t[], Free> data;  // 64-byte aligned, 16 k4 bytes per panel
  std::vector<int32_t> comp;             // [n rounded up to 16], 0 past n
};

// W_q s8 [n, k], row-major (row stride k), into panels; and back.
S8Panels pack_s8_panels(const int8_t* w, int64_t n, int64_t k);
std::vector<int8_t> unpack_s8_panels(const S8Panels& p);

// u[r, c] = q[r, c] + 128 with q as quantize_rows_s8 makes it (scales[r] the same); columns
// cols..ldu-1 of each u row are set to 128 (q = 0). x has row stride ld.
void quantize_rows_u8(const float* x, int64_t rows, int64_t cols, int64_t ld, uint8_t* u, int64_t ldu,
                      float* scales);

struct S8GemvArgs {
  int64_t m = 0;
  const uint8_t* xu = nullptr;  // [m, ldxu] from quantize_rows_u8 with ldu = w.k4
  int64_t ldxu = 0;
  const float* sx = nullptr;  // [m]
  const float* sw = nullptr;  // [n]
  float beta = 0.0f;          // 0: y is not read
  float* y = nullptr;
  int64_t ldy = 0;
  const float* bias = nullptr;  // [n]: y = fma(s_x s_w, acc, bias) (beta 0)
};
// Parallel over groups of 64 columns when the product is large enough (and not already inside
// a parallel region).
void gemm_s8_gemv(const S8GemvArgs& a, const S8Panels& w);

}  // namespace attn
