// Private to src/kernels: the one-query attention products (include/attn/kernels/attend_rows.h)
// written once over a lane type L (simd_avx2.h, simd_avx512.h), instantiated by
// avx2/attend_rows.cpp and avx512/attend_rows.cpp; Strided and Gathered also serve the generic
// loops (attend_rows.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernel_table.h"

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

// Columns of q kept in registers at a time: half the registers.
template <typename L>
constexpr int64_t kQWidth = L::kRegisters / 2 * L::kLanes;

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
  for (int64_t c0 = 0; c0 < dk; c0 += kQWidth<L>) {
    const int64_t width = std::min<int64_t>(kQWidth<L>, dk - c0);
    typename L::V qv[kQWidth<L> / L::kLanes];
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

// acc[c] += sum_j p_j v_j[c0 + L::kLanes c ...] over `chunks` chunks (the lanes of mask[c]);
// Whole: all 8 chunks full, plain loads (a masked load runs at a fraction of the rate on some CPUs).
template <typename L, bool Whole, typename Rows>
void add_weighted_rows(const float* p, const Rows& values, int64_t rows, int64_t c0, int64_t chunks,
                       const typename L::Mask* mask, typename L::V* acc) {
  for (int64_t j = 0; j < rows; ++j) {
    const typename L::V pj = L::set1(p[j]);
    const float* vj = values(j) + c0;
    for (int64_t c = 0; c < (Whole ? 8 : chunks); ++c)
      acc[c] = L::fma(pj, Whole ? L::load(vj + c * L::kLanes) : L::load_masked(vj + c * L::kLanes, mask[c]), acc[c]);
  }
}

// out = sum_j p_j v_j, 8 vectors of output columns in registers at a time.
template <typename L, typename Rows>
void weighted(const float* p, const Rows& values, int64_t rows, int64_t dk, float* out) {
  constexpr int64_t kWidth = 8 * L::kLanes;
  for (int64_t c0 = 0; c0 < dk; c0 += kWidth) {
    const int64_t width = std::min<int64_t>(kWidth, dk - c0), chunks = (width + L::kLanes - 1) / L::kLanes;
    typename L::V acc[8];
    typename L::Mask mask[8];
    for (int64_t c = 0; c < chunks; ++c) {
      acc[c] = L::zero();
      mask[c] = L::mask(width - L::kLanes * c);
    }
    if (width == kWidth)
      add_weighted_rows<L, true>(p, values, rows, c0, chunks, mask, acc);
    else
      add_weighted_rows<L, false>(p, values, rows, c0, chunks, mask, acc);
    for (int64_t c = 0; c < chunks; ++c)
      L::store(out + c0 + c * L::kLanes, width - L::kLanes * c, mask[c], acc[c]);
  }
}

// Heads of at most 8 chunks (d_k <= 128 on AVX-512, 64 on AVX2: every model's), with the chunk
// count a constant so that every accumulator stays in a register. Whole: d_k a multiple of the
// lanes; otherwise the last chunk is loaded masked (`tail`). No branch inside the loops: one on
// the last chunk made GCC keep every accumulator in memory.
template <typename L, int CH, bool Whole>
[[gnu::always_inline]] inline typename L::V chunk(const float* row, int c, typename L::Mask tail) {
  return Whole || c < CH - 1 ? L::load(row + c * L::kLanes) : L::load_masked(row + c * L::kLanes, tail);
}

// s_j = scale (q . k_j), 8 keys at a time: 8 independent sums of CH FMAs each, their lane sums by
// L::sum8's tree (one horizontal sum a key cost as much as its FMAs). The keys past `rows` in
// the last group read key 0 again and are not stored.
template <typename L, int CH, bool Whole, typename Rows>
void scores_fixed(const float* q, const Rows& keys, int64_t rows, int64_t dk, float scale, float* s) {
  using V = typename L::V;
  const typename L::Mask tail = L::mask(dk - (CH - 1) * L::kLanes);
  V qv[CH];
  for (int c = 0; c < CH; ++c) qv[c] = chunk<L, CH, Whole>(q, c, tail);
  for (int64_t j0 = 0; j0 < rows; j0 += 8) {
    V acc[8];
    for (int j = 0; j < 8; ++j) {
      const float* k = keys(j0 + j < rows ? j0 + j : 0);
      acc[j] = L::zero();
      for (int c = 0; c < CH; ++c) acc[j] = L::fma(qv[c], chunk<L, CH, Whole>(k, c, tail), acc[j]);
    }
    float sums[8];
    L::sum8(acc, sums);
    for (int64_t j = 0; j < std::min<int64_t>(8, rows - j0); ++j) s[j0 + j] = scale * sums[j];
  }
}

// out = sum_j p_j v_j with S independent sums of each chunk (key j goes to sum j mod S), so that
// the FMAs of consecutive keys do not wait on each other; the S sums added at the end.
template <typename L, int CH, bool Whole, typename Rows>
void weighted_fixed(const float* p, const Rows& values, int64_t rows, int64_t dk, float* out) {
  using V = typename L::V;
  constexpr int S = std::clamp(L::kRegisters / 2 / CH, 1, 8);
  const typename L::Mask tail = L::mask(dk - (CH - 1) * L::kLanes);
  V acc[S][CH];
  for (int i = 0; i < S; ++i)
    for (int c = 0; c < CH; ++c) acc[i][c] = L::zero();
  int64_t j = 0;
  for (; j + S <= rows; j += S)
    for (int i = 0; i < S; ++i) {
      const V pj = L::set1(p[j + i]);
      const float* v = values(j + i);
      for (int c = 0; c < CH; ++c) acc[i][c] = L::fma(pj, chunk<L, CH, Whole>(v, c, tail), acc[i][c]);
    }
  for (; j < rows; ++j) {
    const V pj = L::set1(p[j]);
    const float* v = values(j);
    for (int c = 0; c < CH; ++c) acc[0][c] = L::fma(pj, chunk<L, CH, Whole>(v, c, tail), acc[0][c]);
  }
  for (int c = 0; c < CH; ++c) {
    V total = acc[0][c];
    for (int i = 1; i < S; ++i) total = L::add(total, acc[i][c]);
    if (Whole || c < CH - 1)
      L::store(out + c * L::kLanes, total);
    else
      L::store_masked(out + c * L::kLanes, tail, total);
  }
}

// The fixed forms for heads of 1-8 chunks, the general ones past them.
template <typename L, int CH, typename Rows>
void scores_chunks(const float* q, const Rows& keys, int64_t rows, int64_t dk, float scale, float* s) {
  if (dk % L::kLanes == 0)
    scores_fixed<L, CH, true>(q, keys, rows, dk, scale, s);
  else
    scores_fixed<L, CH, false>(q, keys, rows, dk, scale, s);
}

template <typename L, int CH, typename Rows>
void weighted_chunks(const float* p, const Rows& values, int64_t rows, int64_t dk, float* out) {
  if (dk % L::kLanes == 0)
    weighted_fixed<L, CH, true>(p, values, rows, dk, out);
  else
    weighted_fixed<L, CH, false>(p, values, rows, dk, out);
}

template <typename L, typename Rows>
void scores_any(const float* q, const Rows& keys, int64_t rows, int64_t dk, float scale, float* s) {
  switch ((dk + L::kLanes - 1) / L::kLanes) {
    case 0: return;
    case 1: return scores_chunks<L, 1>(q, keys, rows, dk, scale, s);
    case 2: return scores_chunks<L, 2>(q, keys, rows, dk, scale, s);
    case 3: return scores_chunks<L, 3>(q, keys, rows, dk, scale, s);
    case 4: return scores_chunks<L, 4>(q, keys, rows, dk, scale, s);
    case 5: return scores_chunks<L, 5>(q, keys, rows, dk, scale, s);
    case 6: return scores_chunks<L, 6>(q, keys, rows, dk, scale, s);
    case 7: return scores_chunks<L, 7>(q, keys, rows, dk, scale, s);
    case 8: return scores_chunks<L, 8>(q, keys, rows, dk, scale, s);
    default: return scores<L>(q, keys, rows, dk, scale, s);
  }
}

template <typename L, typename Rows>
void weighted_any(const float* p, const Rows& values, int64_t rows, int64_t dk, float* out) {
  switch ((dk + L::kLanes - 1) / L::kLanes) {
    case 0: return;
    case 1: return weighted_chunks<L, 1>(p, values, rows, dk, out);
    case 2: return weighted_chunks<L, 2>(p, values, rows, dk, out);
    case 3: return weighted_chunks<L, 3>(p, values, rows, dk, out);
    case 4: return weighted_chunks<L, 4>(p, values, rows, dk, out);
    case 5: return weighted_chunks<L, 5>(p, values, rows, dk, out);
    case 6: return weighted_chunks<L, 6>(p, values, rows, dk, out);
    case 7: return weighted_chunks<L, 7>(p, values, rows, dk, out);
    case 8: return weighted_chunks<L, 8>(p, values, rows, dk, out);
    default: return weighted<L>(p, values, rows, dk, out);
  }
}

// The four entries of the kernel table.
template <typename L>
void fill_attend_rows_with(KernelTable& t) {
  t.scores_one_query = [](const float* q, const float* k, int64_t ld, int64_t rows, int64_t dk, float scale, float* s) {
    scores_any<L>(q, Strided{k, ld}, rows, dk, scale, s);
  };
  t.weighted_rows = [](const float* p, const float* v, int64_t ld, int64_t rows, int64_t dk, float* out) {
    weighted_any<L>(p, Strided{v, ld}, rows, dk, out);
  };
  t.scores_one_query_at = [](const float* q, const float* const* k, int64_t rows, int64_t dk, float scale, float* s) {
    scores_any<L>(q, Gathered{k}, rows, dk, scale, s);
  };
  t.weighted_rows_at = [](const float* p, const float* const* v, int64_t rows, int64_t dk, float* out) {
    weighted_any<L>(p, Gathered{v}, rows, dk, out);
  };
}

}  // namespace attn::detail
