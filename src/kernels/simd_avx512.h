// Private to src/kernels/avx512/: avx512::Lanes, the small vector type the kernels are written
// over (16 floats or 16 int32 a vector, 32 registers): the members of avx2::Lanes (simd_avx2.h),
// with masks in mask registers. Only translation units compiled with -mavx512f -mavx512bw
// -mavx512dq -mavx512vl include it (kernel_table.h says why).
//
// Where GCC 12 warns about an intrinsic's undefined pass-through lanes, the maskz form with every
// lane on is used instead (the same instruction).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace attn::avx512 {

struct Lanes {
  using V = __m512;
  using I = __m512i;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;

  // --- masks
  static Mask mask(int64_t left) {
    if (left <= 0) return 0;
    return left >= 16 ? static_cast<Mask>(0xffff) : static_cast<Mask>((1u << left) - 1u);
  }
  static Mask mask_of_bits(uint32_t bits) { return static_cast<Mask>(bits); }
  static uint32_t bits_of(Mask m) { return m; }
  static Mask both(Mask a, Mask b) { return a & b; }
  static Mask greater(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static Mask greater(I a, I b) { return _mm512_cmpgt_epi32_mask(a, b); }

  // --- floats
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load_masked(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void store_masked(float* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }
  // Plain when all 16 lanes are covered: a masked store runs at a fraction of the plain one's rate
  // on AMD's AVX-512 CPUs (a Zen 5: attention's backward 13% faster with plain stores).
  static V load(const float* p, int64_t left, Mask m) { return left >= 16 ? load(p) : load_masked(p, m); }
  static V load(const float* p, int64_t left) { return left >= 16 ? load(p) : load_masked(p, mask(left)); }
  static void store(float* p, int64_t left, Mask m, V v) {
    if (left >= 16)
      store(p, v);
    else
      store_masked(p, m, v);
  }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V blend(Mask m, V off, V on) { return _mm512_mask_blend_ps(m, off, on); }
  static V keep(Mask m, V v) { return _mm512_maskz_mov_ps(m, v); }
  static V scale_pow2(V p, V n) { return _mm512_scalef_ps(p, n); }  // p 2^n in one instruction
  // By halves down to 8 lanes, then as avx2::Lanes (GCC 12's _mm512_reduce_add_ps warns inlined).
  static __m256 halves_added(V v) { return _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)); }
  static float sum(V v) {
    const __m256 a = halves_added(v);
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    b = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
  }
  static float largest(V v) {
    const __m256 a = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 b = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    b = _mm_max_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_max_ss(b, _mm_movehdup_ps(b)));
  }
  // out[i] = the sum of v[i]'s lanes, i < 8: the two halves added, then avx2::Lanes::sum8's tree.
  static void sum8(const V* v, float* out) {
    __m256 h[8];
    for (int i = 0; i < 8; ++i) h[i] = halves_added(v[i]);
    const __m256 t0 = _mm256_hadd_ps(h[0], h[1]), t1 = _mm256_hadd_ps(h[2], h[3]);
    const __m256 t2 = _mm256_hadd_ps(h[4], h[5]), t3 = _mm256_hadd_ps(h[6], h[7]);
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
  }

  // --- int32 lanes
  static I izero() { return _mm512_setzero_si512(); }
  static I iset1(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
  static I iota() { return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
  static I iload(const void* p) { return _mm512_loadu_si512(p); }
  static I iload_aligned(const void* p) { return _mm512_load_si512(p); }
  static void istore_aligned(void* p, I v) { _mm512_store_si512(p, v); }
  static I iadd(I a, I b) { return _mm512_add_epi32(a, b); }
  static I isub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I ixor(I a, I b) { return _mm512_xor_si512(a, b); }
  static I imul(I a, I b) { return _mm512_mullo_epi32(a, b); }
  template <int N>
  static I shift_right(I a) { return _mm512_maskz_srli_epi32(0xffff, a, N); }
  static V to_float(I a) { return _mm512_cvtepi32_ps(a); }
  static I to_int(V a) { return _mm512_cvtps_epi32(a); }
  static void store_s8(uint8_t* p, int64_t left, I q, uint8_t flip) {
    const __m128i v = _mm_xor_si128(_mm512_cvtsepi32_epi8(q), _mm_set1_epi8(static_cast<char>(flip)));
    if (left >= 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    else
      _mm_mask_storeu_epi8(p, mask(left), v);
  }
#ifdef __AVX512VNNI__  // only avx512/gemm_s8_gemv.cpp is compiled with VNNI (CMakeLists.txt)
  static I dot_u8s8(I acc, I x, I w) { return _mm512_dpbusd_epi32(acc, x, w); }
#endif

  // dst[c ldd + r] = src[r lds + c] for r < rows, c < cols: in blocks of 16 x 16 transposed in
  // registers (transpose16).
  static void transpose(const float* src, int64_t lds, int64_t rows, int64_t cols, float* dst, int64_t ldd);
};

namespace detail {

// Rows interleaved in pairs, then pairs of pairs, then 128-bit lanes twice; r[c] ends as column c.
inline void transpose16_in_registers(__m512* r) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {  // (r_i c, r_i+1 c) pairs
    t[i] = _mm512_maskz_unpacklo_ps(0xffff, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[i], r[i + 1]);
  }
  auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
#pragma GCC unroll 4
  for (int g = 0; g < 16; g += 4) {  // r[g + q]: columns q, q + 4, q + 8, q + 12 of rows g..g+3
    r[g] = lo(t[g], t[g + 2]);
    r[g + 1] = hi(t[g], t[g + 2]);
    r[g + 2] = lo(t[g + 1], t[g + 3]);
    r[g + 3] = hi(t[g + 1], t[g + 3]);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {  // two groups of four rows side by side
    t[q] = _mm512_maskz_shuffle_f32x4(0xffff, r[q], r[4 + q], 0x88);
    t[q + 4] = _mm512_maskz_shuffle_f32x4(0xffff, r[q], r[4 + q], 0xdd);
    t[q + 8] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + q], r[12 + q], 0x88);
    t[q + 12] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + q], r[12 + q], 0xdd);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {  // column c = q + 4 L of all 16 rows
    r[q] = _mm512_maskz_shuffle_f32x4(0xffff, t[q], t[8 + q], 0x88);
    r[q + 8] = _mm512_maskz_shuffle_f32x4(0xffff, t[q], t[8 + q], 0xdd);
    r[q + 4] = _mm512_maskz_shuffle_f32x4(0xffff, t[q + 4], t[12 + q], 0x88);
    r[q + 12] = _mm512_maskz_shuffle_f32x4(0xffff, t[q + 4], t[12 + q], 0xdd);
  }
}

}  // namespace detail

inline void Lanes::transpose(const float* src, int64_t lds, int64_t rows, int64_t cols, float* dst, int64_t ldd) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16)
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t nr = rows - r0 < 16 ? rows - r0 : 16, nc = cols - c0 < 16 ? cols - c0 : 16;
      const Mask cm = mask(nc), rm = mask(nr);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) r[i] = i < nr ? load_masked(src + (r0 + i) * lds + c0, cm) : zero();
      detail::transpose16_in_registers(r);
      for (int64_t c = 0; c < nc; ++c) store(dst + (c0 + c) * ldd + r0, nr, rm, r[c]);
    }
}

}  // namespace attn::avx512
