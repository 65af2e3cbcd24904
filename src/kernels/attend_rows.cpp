#include "attn/kernels/attend_rows.h"

#include <algorithm>

#include "lane_mask.h"

namespace attn {
namespace {

// Row j of the keys or values: `ld` floats apart (one head of a cache), or wherever a pointer
// says (one head of a beam's history, spread over the cache's slots).
struct Strided {
  const float* base;
  int64_t ld;
  const float* operator()(int64_t j) const { return base + j * ld; }
};
struct Gathered {
  const float* const* rows;
  const float* operator()(int64_t j) const { return rows[j]; }
};

#if defined(__AVX512F__) && defined(__AVX512DQ__)

using detail::lane_mask;

// The sum of the 16 lanes (by halves; GCC 12's _mm512_reduce_add_ps warns when inlined here).
inline float lane_sum(__m512 v) {
  const __m256 a = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

// The lanes of one vector: the primitives the shared one-query scores below are written in.
using Lanes = __m512;
constexpr int64_t kLanes = 16;
constexpr int64_t kQWidth = 256;  // q in at most 16 registers at a time
inline Lanes zero_lanes() { return _mm512_setzero_ps(); }
inline Lanes load_lanes(const float* p, int64_t left) { return _mm512_maskz_loadu_ps(lane_mask(left), p); }
inline Lanes fma_lanes(Lanes a, Lanes b, Lanes c) { return _mm512_fmadd_ps(a, b, c); }

template <typename Rows>
void weighted(const float* p, const Rows& values, int64_t rows, int64_t dk, float* out) {
  for (int64_t c0 = 0; c0 < dk; c0 += 128) {  // up to 8 accumulators
    const int64_t width = std::min<int64_t>(128, dk - c0), chunks = (width + 15) / 16;
    __m512 acc[8];
    for (int64_t c = 0; c < chunks; ++c) acc[c] = _mm512_setzero_ps();
    for (int64_t j = 0; j < rows; ++j) {
      const __m512 pj = _mm512_set1_ps(p[j]);
      const float* vj = values(j) + c0;
      for (int64_t c = 0; c < chunks; ++c)
        acc[c] = _mm512_fmadd_ps(pj, _mm512_maskz_loadu_ps(lane_mask(width - 16 * c), vj + c * 16), acc[c]);
    }
    for (int64_t c = 0; c < chunks; ++c) detail::store16(out + c0 + c * 16, lane_mask(width - 16 * c), acc[c]);
  }
}

#elif defined(__AVX2__) && defined(__FMA__)

using detail::lane_mask8;

inline float lane_sum(__m256 v) {
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

// As the AVX-512 lanes at half the width.
using Lanes = __m256;
constexpr int64_t kLanes = 8;
constexpr int64_t kQWidth = 64;  // q in at most 8 registers at a time
inline Lanes zero_lanes() { return _mm256_setzero_ps(); }
inline Lanes load_lanes(const float* p, int64_t left) { return detail::load8(p, left, lane_mask8(left)); }
inline Lanes fma_lanes(Lanes a, Lanes b, Lanes c) { return _mm256_fmadd_ps(a, b, c); }

// acc[c] += sum_j p_j v_j[c0 + 8 c ...] over `chunks` chunks of 8 (the lanes of mask[c]); Whole:
// all 8 chunks full, plain loads (a masked load runs at a fraction of the rate on some CPUs).
template <bool Whole, typename Rows>
void add_weighted_rows(const float* p, const Rows& values, int64_t rows, int64_t c0, int64_t chunks,
                       const __m256i* mask, __m256* acc) {
  for (int64_t j = 0; j < rows; ++j) {
    const __m256 pj = _mm256_set1_ps(p[j]);
    const float* vj = values(j) + c0;
    for (int64_t c = 0; c < (Whole ? 8 : chunks); ++c)
      acc[c] = _mm256_fmadd_ps(pj, Whole ? _mm256_loadu_ps(vj + c * 8) : _mm256_maskload_ps(vj + c * 8, mask[c]),
                               acc[c]);
  }
}

template <typename Rows>
void weighted(const float* p, const Rows& values, int64_t rows, int64_t dk, float* out) {
  for (int64_t c0 = 0; c0 < dk; c0 += 64) {  // up to 8 accumulators
    const int64_t width = std::min<int64_t>(64, dk - c0), chunks = (width + 7) / 8;
    __m256 acc[8];
    __m256i mask[8];
    for (int64_t c = 0; c < chunks; ++c) {
      acc[c] = _mm256_setzero_ps();
      mask[c] = lane_mask8(width - 8 * c);
    }
    if (width == 64)
      add_weighted_rows<true>(p, values, rows, c0, chunks, mask, acc);
    else
      add_weighted_rows<false>(p, values, rows, c0, chunks, mask, acc);
    for (int64_t c = 0; c < chunks; ++c) detail::store8(out + c0 + c * 8, width - 8 * c, mask[c], acc[c]);
  }
}

#else

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

#endif

#if (defined(__AVX512F__) && defined(__AVX512DQ__)) || (defined(__AVX2__) && defined(__FMA__))

// s_j = scale (q . k_j) for N keys at once (key j at row(j0 + j)); q (width floats) is in `qv`,
// kLanes a chunk.
template <int N, typename Rows>
void scores_block(const Lanes* qv, int64_t width, const Rows& row, int64_t j0, float scale, float* s) {
  Lanes acc[N];
  for (int j = 0; j < N; ++j) acc[j] = zero_lanes();
  for (int64_t c = 0; kLanes * c < width; ++c)
    for (int j = 0; j < N; ++j) acc[j] = fma_lanes(qv[c], load_lanes(row(j0 + j) + c * kLanes, width - kLanes * c), acc[j]);
  for (int j = 0; j < N; ++j) s[j] = scale * lane_sum(acc[j]);
}

template <typename Rows>
void scores(const float* q, const Rows& keys, int64_t rows, int64_t dk, float scale, float* s) {
  for (int64_t c0 = 0; c0 < dk; c0 += kQWidth) {
    const int64_t width = std::min<int64_t>(kQWidth, dk - c0);
    Lanes qv[kQWidth / kLanes];
    for (int64_t c = 0; kLanes * c < width; ++c) qv[c] = load_lanes(q + c0 + c * kLanes, width - kLanes * c);
    const auto k = [&](int64_t j) { return keys(j) + c0; };
    float part[4];
    for (int64_t j = 0; j < rows; j += 4) {
      const int64_t n = std::min<int64_t>(4, rows - j);
      float* out = c0 == 0 ? s + j : part;
      switch (n) {
        case 4: scores_block<4>(qv, width, k, j, scale, out); break;
        case 3: scores_block<3>(qv, width, k, j, scale, out); break;
        case 2: scores_block<2>(qv, width, k, j, scale, out); break;
        default: scores_block<1>(qv, width, k, j, scale, out); break;
      }
      if (c0 > 0)
        for (int64_t i = 0; i < n; ++i) s[j + i] += part[i];
    }
  }
}

#endif

}  // namespace

void scores_one_query(const float* q, const float* k, int64_t ld, int64_t rows, int64_t dk, float scale,
                      float* s) {
  scores(q, Strided{k, ld}, rows, dk, scale, s);
}

void weighted_rows(const float* p, const float* v, int64_t ld, int64_t rows, int64_t dk, float* out) {
  weighted(p, Strided{v, ld}, rows, dk, out);
}

void scores_one_query_at(const float* q, const float* const* k, int64_t rows, int64_t dk, float scale, float* s) {
  scores(q, Gathered{k}, rows, dk, scale, s);
}

void weighted_rows_at(const float* p, const float* const* v, int64_t rows, int64_t dk, float* out) {
  weighted(p, Gathered{v}, rows, dk, out);
}

}  // namespace attn
