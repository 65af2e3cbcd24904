// The AVX-512 forms of the one-query attention products (include/attn/kernels/attend_rows.h): q
// in registers, four keys at a time; the weighted sum keeps up to 128 output columns in registers.
#include "../attend_rows_impl.h"
#include "../kernel_table.h"
#include "../simd_avx512.h"

namespace attn::detail {
namespace {

using avx512::lane_mask;
using avx512::store16;

// The sum of the 16 lanes (by halves; GCC 12's _mm512_reduce_add_ps warns when inlined here).
inline float lane_sum(__m512 v) {
  const __m256 a = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

// The lanes of one vector: the primitives the shared one-query scores are written in.
struct Lanes {
  using V = __m512;
  static constexpr int64_t kLanes = 16;
  static constexpr int64_t kQWidth = 256;  // q in at most 16 registers at a time
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p, int64_t left) { return _mm512_maskz_loadu_ps(lane_mask(left), p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static float sum(V v) { return lane_sum(v); }
};

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
    for (int64_t c = 0; c < chunks; ++c) store16(out + c0 + c * 16, lane_mask(width - 16 * c), acc[c]);
  }
}

}  // namespace

template <>
void fill_attend_rows<Isa::avx512>(KernelTable& t) {
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
