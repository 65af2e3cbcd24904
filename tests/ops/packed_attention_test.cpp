// packed_attention (heads read in place from the packed projections, written side by side) must
// equal scaled_dot_product_attention on the split heads followed by the merge: forward, every
// gradient, with padding, causal masks and dropout (the same random stream). Plus its own
// finite-difference check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "attn/ops.h"
#include "gradcheck.h"

using namespace attn;
using attn::testing::grad_check;
using attn::testing::random_tensor;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<float> x = a.to_vector(), y = b.to_vector();
  EXPECT_EQ(x.size(), y.size());
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(x[i]) - y[i]));
  return m;
}

// [B, T, width] columns [col, col + H dk) -> [B, H, T, dk]
Var split(const Var& x, int64_t col, int64_t heads, int64_t dk) {
  int64_t B = x.size(0), T = x.size(1);
  return transpose(reshape(slice(x, 2, col, col + heads * dk), {B, T, heads, dk}), 1, 2);
}

struct Case {
  int64_t B, Tq, Tk, H, dk;
  bool causal, padding;
  float dropout;
};

void check_case(const Case& c) {
  const int64_t d = c.H * c.dk;
  // Self-attention when Tq == Tk: one [B, T, 3d] tensor; else q [B, Tq, d] and kv [B, Tk, 2d].
  bool self = c.Tq == c.Tk;
  Tensor qsrc = random_tensor({c.B, c.Tq, self ? 3 * d : d}, 11, 2.0f);
  Tensor kvsrc = self ? qsrc : random_tensor({c.B, c.Tk, 2 * d}, 12, 2.0f);
  Tensor dy = random_tensor({c.B, c.Tq, d}, 13);
  AttentionMask mask;
  mask.causal = c.causal;
  if (c.padding) {
    mask.key_padding = Tensor::zeros({c.B, c.Tk}, DType::i32);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t j = c.Tk - b; j < c.Tk; ++j) mask.key_padding.data<int32_t>()[b * c.Tk + j] = 1;
  }
  int64_t kcol = self ? d : 0, vcol = self ? 2 * d : d;
  auto run = [&](bool packed, Tensor* grad_q, Tensor* grad_kv, Tensor* weights) {
    Var q(qsrc.clone(), true);
    Var kv = self ? q : Var(kvsrc.clone(), true);
    Rng rng(99, 5);
    AttentionOptions o;
    o.dropout = c.dropout;
    o.rng = &rng;
    o.weights = weights;
    Tape tape;
    Var y;
    {
      TapeScope scope(tape);
      if (packed) {
        y = packed_attention({q, 0, d}, {kv, kcol, d}, {kv, vcol, d}, c.H, mask, o);
      } else {
        Var h = scaled_dot_product_attention(split(q, 0, c.H, c.dk), split(kv, kcol, c.H, c.dk),
                                             split(kv, vcol, c.H, c.dk), mask, o);
        y = reshape(transpose(h, 1, 2), {c.B, c.Tq, d});
      }
      tape.backward(y, dy);
    }
    *grad_q = q.grad().clone();
    *grad_kv = kv.grad().clone();
    return y.value().clone();
  };
  Tensor gq1, gkv1, gq2, gkv2, w1, w2;
  Tensor y1 = run(true, &gq1, &gkv1, &w1), y2 = run(false, &gq2, &gkv2, &w2);
  const double tol = 2e-5;
  double dy_ = max_abs_diff(y1, y2), dq = max_abs_diff(gq1, gq2), dkv = max_abs_diff(gkv1, gkv2),
         dw = max_abs_diff(w1, w2);
  std::printf("B=%lld Tq=%lld Tk=%lld H=%lld dk=%lld causal=%d pad=%d dropout=%.1f: max |diff| out %.2e, "
              "dq %.2e, dkv %.2e, P %.2e (tolerance %.0e)\n",
              (long long)c.B, (long long)c.Tq, (long long)c.Tk, (long long)c.H, (long long)c.dk, c.causal,
              c.padding, c.dropout, dy_, dq, dkv, dw, tol);
  EXPECT_LE(dy_, tol);
  EXPECT_LE(dq, tol);
  EXPECT_LE(dkv, tol);
  EXPECT_LE(dw, tol);
}

}  // namespace

TEST(PackedAttention, EqualsSplitHeadsPath) {
  check_case({2, 5, 5, 3, 4, false, true, 0.0f});
  check_case({3, 6, 6, 2, 8, true, false, 0.0f});
  check_case({2, 4, 7, 4, 4, false, true, 0.0f});   // cross-attention shapes
  check_case({2, 6, 6, 2, 4, true, true, 0.3f});    // dropout: the same stream, the same mask
  check_case({2, 3, 5, 2, 4, false, false, 0.5f});
}

TEST(PackedAttention, GradCheck) {
  using In = std::vector<Var>;
  Tensor qkv = random_tensor({2, 4, 3 * 6}, 21);
  AttentionMask mask{Tensor::zeros({2, 4}, DType::i32), true};
  mask.key_padding.data<int32_t>()[3] = 1;
  EXPECT_LE(grad_check("packed self-attention", {qkv}, [&](const In& x) {
              return packed_attention({x[0], 0, 6}, {x[0], 6, 6}, {x[0], 12, 6}, 2, mask);
            }), 1.0);
  Tensor q = random_tensor({2, 3, 6}, 22), kv = random_tensor({2, 5, 12}, 23);
  AttentionMask pad{Tensor::zeros({2, 5}, DType::i32), false};
  pad.key_padding.data<int32_t>()[9] = 1;
  EXPECT_LE(grad_check("packed cross-attention", {q, kv}, [&](const In& x) {
              return packed_attention({x[0], 0, 6}, {x[1], 0, 6}, {x[1], 6, 6}, 3, pad);
            }), 1.0);
}

TEST(PackedAttention, GradientBuffersPartlyCoveredOrExisting) {
  // A fresh gradient is left uninitialised only when Q, K and V cover each of its columns once.
  // Heads reading columns [0, 12) of a 16-wide tensor: the last 4 columns' gradient must be 0.
  // Called twice on the same tensor: the second call adds to the first's gradient.
  Tensor src = random_tensor({2, 5, 16}, 31), dy = random_tensor({2, 5, 4}, 32);
  AttentionMask none;
  auto grads = [&](int calls) {
    {  // freed blocks of the gradient's size full of NaN, for an uninitialised buffer to reuse
      std::vector<Tensor> junk;
      for (int i = 0; i < 8; ++i) junk.push_back(Tensor::full({2, 5, 16}, std::nanf("")));
    }
    Var x(src.clone(), true);
    Tape tape;
    {
      TapeScope scope(tape);
      Var y = packed_attention({x, 0, 4}, {x, 4, 4}, {x, 8, 4}, 2, none);
      for (int i = 1; i < calls; ++i) y = add(y, packed_attention({x, 0, 4}, {x, 4, 4}, {x, 8, 4}, 2, none));
      tape.backward(y, dy);
    }
    return x.grad().clone();
  };
  Tensor once = grads(1), twice = grads(2);
  int64_t nonzero_tail = 0, nonzero_head = 0;
  double worst = 0.0;
  for (int64_t r = 0; r < 10; ++r)
    for (int64_t c = 0; c < 16; ++c) {
      float g1 = once.data<float>()[r * 16 + c], g2 = twice.data<float>()[r * 16 + c];
      if (c >= 12) nonzero_tail += g1 != 0.0f || g2 != 0.0f;
      else nonzero_head += g1 != 0.0f;
      worst = std::max(worst, std::fabs(static_cast<double>(g2) - 2.0 * g1));
    }
  std::printf("uncovered columns' gradient non-zero: %lld (expected 0); covered non-zero: %lld of 120; "
              "twice vs 2 x once max |diff| %.1e\n", (long long)nonzero_tail, (long long)nonzero_head, worst);
  EXPECT_EQ(nonzero_tail, 0);
  EXPECT_GT(nonzero_head, 100);
  EXPECT_LE(worst, 1e-6);
}
