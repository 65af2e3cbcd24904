// The two products of attention for one query (incremental decoding), over keys and values stored
// as rows of d_k floats, `ld` floats apart (one head of a KV cache):
//   s_j = scale (q . k_j),   j < rows                      (scores_one_query)
//   o   = sum_j p_j v_j                                     (weighted_rows)
// AVX-512 where the CPU has it (active_isa(), kernels/cpu.h): q stays in registers and each key
// row is read once, eight keys at a time, their lane sums by one tree; the weighted sum keeps the
// head's columns in registers, in several independent sums for consecutive value rows, reading each
// row once. Heads of up to 128 columns (64 on AVX2, which does the same at half the width) have
// their chunk count fixed at compile time; wider ones take a general loop; plain loops without
// AVX2. Single-threaded: callers split (row, head) pairs.
// The _at forms take the address of every row instead (k[j], v[j]: a beam's history, whose
// positions lie in different slots of the cache); same arithmetic, same order, same bits.
#pragma once

#include <cstdint>

namespace attn {

void scores_one_query(const float* q, const float* k, int64_t ld, int64_t rows, int64_t dk, float scale,
                      float* s);
void weighted_rows(const float* p, const float* v, int64_t ld, int64_t rows, int64_t dk, float* out);
void scores_one_query_at(const float* q, const float* const* k, int64_t rows, int64_t dk, float scale, float* s);
void weighted_rows_at(const float* p, const float* const* v, int64_t rows, int64_t dk, float* out);

}  // namespace attn
