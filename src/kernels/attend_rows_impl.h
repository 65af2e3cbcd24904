// Private to src/kernels: the one-query attention scores (include/attn/kernels/attend_rows.h)
// written once over a lane type L, instantiated by avx2/attend_rows.cpp and avx512/attend_rows.cpp
// with theirs. L has V (the vector), kLanes, kQWidth (columns of q kept in registers), zero(),
// load(p, left) (0 past left), fma(a, b, c) and sum(v) (of the lanes).
#pragma once

#include <algorithm>
#include <cstdint>

namespace attn::detail {

// Row j of the keys or values: `ld` floats apart (one head of a cache), or wherever a pointer
// says (one head of a beam's history, spread over the cache's slots). (Always inlined: the per-Isa
// units must not share an out-of-line copy, kernel_table.h.)
struct Strided {
  const float* base;
  int64_t ld;
  [[gnu::always_inline]] const float* operator()(int64_t j) const { return base + j * ld; }
};
struct Gathered {
  const float* const* rows;
  [[gnu::always_inline]] const float* operator()(int64_t j) const { return rows[j]; }
};

// s_j = scale (q . k_j) for N keys at once (key j at row(j0 + j)); q (width floats) is in `qv`,
// L::kLanes a chunk.
template <typename L, int N, typename Rows>
void scores_block(const typename L::V* qv, int64_t width, const Rows& row, int64_t j0, float scale, float* s) {
  typename L::V acc[N];
  for (int j = 0; j < N; ++j) acc[j] = L::zero();
  for (int64_t c = 0; L::kLanes * c < width; ++c)
    for (int j = 0; j < N; ++j)
      acc[j] = L::fma(qv[c], L::load(row(j0 + j) + c * L::kLanes, width - L::kLanes * c), acc[j]);
  for (int j = 0; j < N; ++j) s[j] = scale * L::sum(acc[j]);
}

template <typename L, typename Rows>
void scores(const float* q, const Rows& keys, int64_t rows, int64_t dk, float scale, float* s) {
  for (int64_t c0 = 0; c0 < dk; c0 += L::kQWidth) {
    const int64_t width = std::min<int64_t>(L::kQWidth, dk - c0);
    typename L::V qv[L::kQWidth / L::kLanes];
    for (int64_t c = 0; L::kLanes * c < width; ++c) qv[c] = L::load(q + c0 + c * L::kLanes, width - L::kLanes * c);
    const auto k = [&](int64_t j) { return keys(j) + c0; };
    float part[4];
    for (int64_t j = 0; j < rows; j += 4) {
      const int64_t n = std::min<int64_t>(4, rows - j);
      float* out = c0 == 0 ? s + j : part;
      switch (n) {
        case 4: scores_block<L, 4>(qv, width, k, j, scale, out); break;
        case 3: scores_block<L, 3>(qv, width, k, j, scale, out); break;
        case 2: scores_block<L, 2>(qv, width, k, j, scale, out); break;
        default: scores_block<L, 1>(qv, width, k, j, scale, out); break;
      }
      if (c0 > 0)
        for (int64_t i = 0; i < n; ++i) s[j + i] += part[i];
    }
  }
}

}  // namespace attn::detail
