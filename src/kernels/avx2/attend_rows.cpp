// The AVX2 forms of the one-query attention products (include/attn/kernels/attend_rows.h): as the
// AVX-512 ones at half the width (64 columns).
#include "../attend_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx2.h"

namespace attn::detail {
namespace {

using avx2::lane_mask8;
using avx2::load8;
using avx2::store8;

inline float lane_sum(__m256 v) {
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

// As the AVX-512 lanes at half the width.
struct Lanes {
  using V = __m256;
  static constexpr int64_t kLanes = 8;
  static constexpr int64_t kQWidth = 64;  // q in at most 8 registers at a time
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p, int64_t left) { return load8(p, left, lane_mask8(left)); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static float sum(V v) { return lane_sum(v); }
};

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
    for (int64_t c = 0; c < chunks; ++c) store8(out + c0 + c * 8, width - 8 * c, mask[c], acc[c]);
  }
}

}  // namespace

template <>
void fill_attend_rows<Isa::avx2>(KernelTable& t) {
  t.scores_one_query = [](const float* q, const float* k, int64_t ld, int64_t rows, int64_t dk, float scale, float* s) {
    scores<Lanes>(q, Strided{k, ld}, rows, dk, scale, s);
  };
  t.weighted_rows = [](const float* p, const float* v, int64_t ld, int64_t rows, int64_t dk, float* out) {
    weighted(p, Strided{v, ld}, rows, dk, out);
  };
  t.scores_one_query_at = [](const float* q, const float* const* k, int64_t rows, int64_t dk, float scale, float* s) {
    scores<Lanes>(q, Gathered{k}, rows, dk, scale, s);
  };
  t.weighted_rows_at = [](const float* p, const float* const* v, int64_t rows, int64_t dk, float* out) {
    weighted(p, Gathered{v}, rows, dk, out);
  };
}

}  // namespace attn::detail
