// Private to src/kernels/avx2/: avx2::Lanes, the small vector type the kernels are written over
// (8 floats or 8 int32 a vector, 16 registers). simd_avx512.h has the same members at 16 lanes;
// the kernels (<kernel>_impl.h) are templates over either. Only translation units compiled with
// -mavx2 -mfma -mf16c include it (kernel_table.h says why).
//
// AVX2 has no mask registers: a Mask is a vector with all bits set in the lanes that are on.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace attn::avx2 {

struct Lanes {
  using V = __m256;     // floats
  using I = __m256i;    // int32 lanes, or 32 bytes
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;

  // --- masks
  // The lanes a chunk covers when `left` floats remain: all when left >= 8, none when left <= 0.
  static Mask mask(int64_t left) {
    const int covered = left <= 0 ? 0 : left >= 8 ? 8 : static_cast<int>(left);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(covered), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  // Lane l on where bit l of `bits` is set; and back.
  static Mask mask_of_bits(uint32_t bits) {
    const __m256i b = _mm256_set1_epi32(static_cast<int>(bits & 0xffu));
    const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(b, lane), lane);
  }
  static uint32_t bits_of(Mask m) { return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(m))); }
  static Mask both(Mask a, Mask b) { return _mm256_and_si256(a, b); }
  static Mask greater(V a, V b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_GT_OQ)); }  // NaN: off
  static Mask greater(I a, I b) { return _mm256_cmpgt_epi32(a, b); }                              // signed

  // --- floats
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load_masked(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }  // 0 off the mask
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void store_masked(float* p, Mask m, V v) { _mm256_maskstore_ps(p, m, v); }
  // A chunk with `left` floats remaining and its mask(left): a plain load or store when all 8 are
  // covered, since a masked one runs at a fraction of the plain one's rate on some CPUs (AMD's)
  // and row bodies are whole chunks.
  static V load(const float* p, int64_t left, Mask m) { return left >= 8 ? load(p) : load_masked(p, m); }
  static V load(const float* p, int64_t left) { return left >= 8 ? load(p) : load_masked(p, mask(left)); }
  static void store(float* p, int64_t left, Mask m, V v) {
    if (left >= 8)
      store(p, v);
    else
      store_masked(p, m, v);
  }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }    // a b + c, one rounding
  static V fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a b, one rounding
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V blend(Mask m, V off, V on) { return _mm256_blendv_ps(off, on, _mm256_castsi256_ps(m)); }
  static V keep(Mask m, V v) { return _mm256_and_ps(v, _mm256_castsi256_ps(m)); }  // 0 off the mask
  // p 2^n for integral n (as floats): the exponent bits built in two halves, so that n = 128 (a
  // finite exp near 88.7) and n < -126 scale correctly; n clamped to [-254, 254] (past 128: inf).
  static V scale_pow2(V p, V n) {
    const __m256i ni = _mm256_cvtps_epi32(max(min(n, set1(254.0f)), set1(-254.0f)));
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1), bias = _mm256_set1_epi32(127);
    const V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return mul(mul(p, s1), s2);
  }
  // The sum (max) of the lanes: halves, then pairs, then the last two.
  static float sum(V v) {
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    b = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
  }
  static float largest(V v) {
    __m128 b = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    b = _mm_max_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_max_ss(b, _mm_movehdup_ps(b)));
  }
  // out[i] = the sum of the lanes of v[i], i < 8, by a tree of horizontal adds:
  // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) for every vector.
  static void sum8(const V* v, float* out) {
    const __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
    const __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);  // halves' sums of v0-3, v4-7
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
  }

  // --- int32 lanes
  static I izero() { return _mm256_setzero_si256(); }
  static I iset1(uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
  static I iota() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }  // lane l: l
  static I iload(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static I iload_aligned(const void* p) { return _mm256_load_si256(static_cast<const __m256i*>(p)); }
  static void istore_aligned(void* p, I v) { _mm256_store_si256(static_cast<__m256i*>(p), v); }
  static I iadd(I a, I b) { return _mm256_add_epi32(a, b); }
  static I isub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I ixor(I a, I b) { return _mm256_xor_si256(a, b); }
  static I imul(I a, I b) { return _mm256_mullo_epi32(a, b); }  // the low 32 bits
  template <int N>
  static I shift_right(I a) { return _mm256_srli_epi32(a, N); }  // logical
  static V to_float(I a) { return _mm256_cvtepi32_ps(a); }
  static I to_int(V a) { return _mm256_cvtps_epi32(a); }  // in the rounding mode: half to even
  // The lanes of q saturated to s8, each byte xor `flip`, stored to p: min(left, 8) bytes.
  static void store_s8(uint8_t* p, int64_t left, I q, uint8_t flip) {
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q, q), q);  // bytes 0-3 of each half
    const __m128i v = _mm_xor_si128(_mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1)),
                                    _mm_set1_epi8(static_cast<char>(flip)));
    if (left >= 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v);
    } else {
      alignas(16) uint8_t bytes[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(bytes), v);
      for (int64_t i = 0; i < left; ++i) p[i] = bytes[i];
    }
  }
  // acc + the sum of the four products u8 x s8 of each int32 lane of x and w. Without VNNI:
  // vpmaddubsw adds neighbouring pairs in saturating s16, which never saturates with 7-bit weights
  // (int8_weight_max() is 63 on such CPUs: |u0 w0 + u1 w1| <= 2 x 255 x 63 = 32130), and vpmaddwd
  // by ones adds the pairs of pairs into s32: the exact sums of vpdpbusd.
  static I dot_u8s8(I acc, I x, I w) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), _mm256_set1_epi16(1)));
  }

  // dst[c ldd + r] = src[r lds + c] for r < rows, c < cols: 8 rows at a time (8 write streams).
  static void transpose(const float* src, int64_t lds, int64_t rows, int64_t cols, float* dst, int64_t ldd) {
    for (int64_t r0 = 0; r0 < rows; r0 += 8)
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t r = r0; r < (rows < r0 + 8 ? rows : r0 + 8); ++r) dst[c * ldd + r] = src[r * lds + c];
  }
};

}  // namespace attn::avx2
