// The one-query attention products (include/attn/kernels/attend_rows.h): the public functions
// call the kernel table; the generic forms are plain loops (AVX2 and AVX-512: avx2/, avx512/).
#include "attn/kernels/attend_rows.h"

#include <algorithm>

#include "attend_rows_impl.h"
#include "kernel_table.h"

namespace attn {
namespace detail {
namespace {

template <typename Rows>
void scores(const float* q, const Rows& keys, int64_t rows, int64_t dk, float scale, float* s) {
  for (int64_t j = 0; j < rows; ++j) {
    const float* k = keys(j);
    float acc = 0.0f;
    for (int64_t c = 0; c < dk; ++c) acc += q[c] * k[c];
    s[j] = scale * acc;
  }
}

template <typename Rows>
void weighted(const float* p, const Rows& values, int64_t rows, int64_t dk, float* out) {
  std::fill(out, out + dk, 0.0f);
  for (int64_t j = 0; j < rows; ++j) {
    const float* v = values(j);
    for (int64_t c = 0; c < dk; ++c) out[c] += p[j] * v[c];
  }
}

}  // namespace

template <>
void fill_attend_rows<Isa::generic>(KernelTable& t) {
  t.scores_one_query = [](const float* q, const float* k, int64_t ld, int64_t rows, int64_t dk, float scale, float* s) {
    scores(q, Strided{k, ld}, rows, dk, scale, s);
  };
  t.weighted_rows = [](const float* p, const float* v, int64_t ld, int64_t rows, int64_t dk, float* out) {
    weighted(p, Strided{v, ld}, rows, dk, out);
  };
  t.scores_one_query_at = [](const float* q, const float* const* k, int64_t rows, int64_t dk, float scale, float* s) {
    scores(q, Gathered{k}, rows, dk, scale, s);
  };
  t.weighted_rows_at = [](const float* p, const float* const* v, int64_t rows, int64_t dk, float* out) {
    weighted(p, Gathered{v}, rows, dk, out);
  };
}

}  // namespace detail

void scores_one_query(const float* q, const float* k, int64_t ld, int64_t rows, int64_t dk, float scale,
                      float* s) {
  detail::kernel_table().scores_one_query(q, k, ld, rows, dk, scale, s);
}

void weighted_rows(const float* p, const float* v, int64_t ld, int64_t rows, int64_t dk, float* out) {
  detail::kernel_table().weighted_rows(p, v, ld, rows, dk, out);
}

void scores_one_query_at(const float* q, const float* const* k, int64_t rows, int64_t dk, float scale, float* s) {
  detail::kernel_table().scores_one_query_at(q, k, rows, dk, scale, s);
}

void weighted_rows_at(const float* p, const float* const* v, int64_t rows, int64_t dk, float* out) {
  detail::kernel_table().weighted_rows_at(p, v, rows, dk, out);
}

}  // namespace attn
