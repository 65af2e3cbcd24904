#include "column_sums.h"

#include <algorithm>

#include "attn/kernels/elementwise.h"
#include "attn/tensor/tensor.h"

namespace attn::detail {

// Blocks of 64 rows: the partial sums take 1/64 of the matrix's memory, and 4096 rows make 64
// blocks to share between the threads.
void add_column_sums(int64_t rows, int64_t n, float* db,
                     const std::function<void(int64_t r0, int64_t r1, float* acc)>& body) {
  constexpr int64_t kRows = 64;
  const int64_t blocks = (rows + kRows - 1) / kRows;
  if (blocks == 0 || n == 0) return;
  Tensor partial = Tensor::empty({blocks, n});
  float* acc = partial.data<float>();
  parallel_for(blocks, 1, [acc, rows, n, &body](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      std::fill(acc + b * n, acc + (b + 1) * n, 0.0f);
      body(b * kRows, std::min(rows, (b + 1) * kRows), acc + b * n);
    }
  });
  parallel_for(n, 256, [acc, db, blocks, n](int64_t j0, int64_t j1) {
    float* __restrict out = db;
    for (int64_t b = 0; b < blocks; ++b) {
      const float* __restrict s = acc + b * n;
      for (int64_t j = j0; j < j1; ++j) out[j] += s[j];
    }
  });
}

}  // namespace attn::detail
