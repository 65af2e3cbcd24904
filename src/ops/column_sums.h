// Private to src/ops: column sums over the rows of a matrix made row by row, for the gradients of
// parameters broadcast over rows (biases, LayerNorm's gamma and beta), summed in the pass that
// makes the rows instead of a pass of their own.
#pragma once

#include <cstdint>
#include <functional>

namespace attn::detail {

// db[j] += sum over rows of a [rows, n] matrix, formed in fixed blocks of rows: body(r0, r1, acc)
// adds rows [r0, r1) into acc (n floats, zero on entry), blocks run in parallel, and their sums
// are added to db in block order, so the value is the same for any thread count.
void add_column_sums(int64_t rows, int64_t n, float* db,
                     const std::function<void(int64_t r0, int64_t r1, float* acc)>& body);

}  // namespace attn::detail
