#include "attn/ops/attention.h"

#include <cmath>
#include <limits>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"
#include "attn/ops/dropout.h"
#include "attn/ops/softmax.h"

namespace attn {
namespace {

struct Dims {
  int64_t B, H, Tq, Tk, dk, dv;
};

// Sets masked scores to -inf: padding keys, and for causal attention the keys after the query.
void apply_mask(float* S, const Dims& d, const AttentionMask& mask) {
  const int32_t* pad = mask.key_padding.defined() ? mask.key_padding.data<int32_t>() : nullptr;
  const float ninf = -std::numeric_limits<float>::infinity();
  int64_t shift = d.Tk - d.Tq;
  parallel_for(d.B * d.H, 4, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      int64_t b = p / d.H;
      for (int64_t i = 0; i < d.Tq; ++i) {
        float* row = S + (p * d.Tq + i) * d.Tk;
        if (pad)
          for (int64_t j = 0; j < d.Tk; ++j)
            if (pad[b * d.Tk + j]) row[j] = ninf;
        if (mask.causal)
          for (int64_t j = std::max<int64_t>(0, i + shift + 1); j < d.Tk; ++j) row[j] = ninf;
      }
    }
  });
}

// C = alpha op(A) op(B) + beta C for each of the B*H pairs.
void each_head(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
               int64_t sa, const float* Bm, int64_t sb, float beta, float* C, int64_t batch) {
  GemmArgs g{ta, tb, m, n, k, alpha, beta, A, ta ? m : k, Bm, tb ? k : n, C, n};
  gemm_batched(g, batch, sa, sb, m * n);
}

}  // namespace

Var scaled_dot_product_attention(const Var& q, const Var& k, const Var& v,
                                 const AttentionMask& mask, const AttentionOptions& options) {
  Tensor qv = q.value().contiguous(), kv = k.value().contiguous(), vv = v.value().contiguous();
  if (!(qv.dim() == 4 && kv.dim() == 4 && vv.dim() == 4))
    fail("attention: q, k, v must be ",
        "[batch, heads, len, d], got ", shape_str(qv.shape()), ", ", shape_str(kv.shape()), ", ",
        shape_str(vv.shape()));
  Dims d{qv.size(0), qv.size(1), qv.size(2), kv.size(2), qv.size(3), vv.size(3)};
  if (!(kv.size(0) == d.B && vv.size(0) == d.B && kv.size(1) == d.H && vv.size(1) == d.H &&
            kv.size(3) == d.dk && vv.size(2) == d.Tk))
    fail("attention: shapes do not agree: q ", shape_str(qv.shape()), ", k ", shape_str(kv.shape()),
        ", v ", shape_str(vv.shape()));
  if (mask.key_padding.defined())
    if (!(mask.key_padding.dtype() == DType::i32 && mask.key_padding.shape() == Shape{d.B, d.Tk}))
      fail("attention: key padding mask must be I32 [", d.B, ", ", d.Tk, "], got ",
          shape_str(mask.key_padding.shape()));
  float scale = options.scale > 0 ? options.scale : 1.0f / std::sqrt(static_cast<float>(d.dk));
  int64_t BH = d.B * d.H;

  // S = Q K^T / sqrt(d_k)                                     [B, H, Tq, Tk]
  Tensor P = Tensor::empty({d.B, d.H, d.Tq, d.Tk});
  each_head(false, true, d.Tq, d.Tk, d.dk, scale, qv.data<float>(), d.Tq * d.dk, kv.data<float>(),
            d.Tk * d.dk, 0.0f, P.data<float>(), BH);
  apply_mask(P.data<float>(), d, mask);
  // P = softmax(S) over the keys
  softmax_rows(P.data<float>(), P.data<float>(), BH * d.Tq, d.Tk);
  if (options.weights) *options.weights = P;

  // Dropout on the weights: Pd = P * M
  Tensor dropmask, Pd = P;
  if (options.dropout > 0.0f) {
    check(options.rng != nullptr, "attention: dropout needs a random stream");
    int64_t n = P.numel();
    dropmask = Tensor::empty(P.shape());
    dropout_mask(dropmask.data<float>(), n, options.dropout, options.rng->seed,
                 options.rng->take(static_cast<uint64_t>(n)));
    Pd = Tensor::empty(P.shape());
    const float* pp = P.data<float>();
    const float* pm = dropmask.data<float>();
    float* pd = Pd.data<float>();
    parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) pd[i] = pp[i] * pm[i];
    });
  }

  // O = Pd V                                                  [B, H, Tq, dv]
  Tensor out = Tensor::empty({d.B, d.H, d.Tq, d.dv});
  each_head(false, false, d.Tq, d.dv, d.Tk, 1.0f, Pd.data<float>(), d.Tq * d.Tk, vv.data<float>(),
            d.Tk * d.dv, 0.0f, out.data<float>(), BH);

  bool grad = needs_grad({&q, &k, &v});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([q, k, v, qv, kv, vv, y, P, Pd, dropmask, d, scale, BH]() mutable {
    if (!y.grad().defined()) return;
    Tensor gO = y.grad().contiguous();
    // dV = Pd^T dO
    if (v.requires_grad())
      each_head(true, false, d.Tk, d.dv, d.Tq, 1.0f, Pd.data<float>(), d.Tq * d.Tk,
                gO.data<float>(), d.Tq * d.dv, 1.0f, v.grad_buffer().data<float>(), BH);
    if (!q.requires_grad() && !k.requires_grad()) return;
    // dPd = dO V^T;  dP = dPd * M
    Tensor dS = Tensor::empty(P.shape());
    each_head(false, true, d.Tq, d.Tk, d.dv, 1.0f, gO.data<float>(), d.Tq * d.dv, vv.data<float>(),
              d.Tk * d.dv, 0.0f, dS.data<float>(), BH);
    float* ds = dS.data<float>();
    const float* p = P.data<float>();
    const float* m = dropmask.defined() ? dropmask.data<float>() : nullptr;
    // dS_ij = P_ij (dP_ij - sum_l dP_il P_il)
    parallel_for(BH * d.Tq, 16, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* row = ds + r * d.Tk;
        const float* pr = p + r * d.Tk;
        if (m)
          for (int64_t j = 0; j < d.Tk; ++j) row[j] *= m[r * d.Tk + j];
        float dot = 0.0f;
        for (int64_t j = 0; j < d.Tk; ++j) dot += row[j] * pr[j];
        for (int64_t j = 0; j < d.Tk; ++j) row[j] = pr[j] * (row[j] - dot);
      }
    });
    // dQ = dS K / sqrt(d_k);  dK = dS^T Q / sqrt(d_k)
    if (q.requires_grad())
      each_head(false, false, d.Tq, d.dk, d.Tk, scale, ds, d.Tq * d.Tk, kv.data<float>(),
                d.Tk * d.dk, 1.0f, q.grad_buffer().data<float>(), BH);
    if (k.requires_grad())
      each_head(true, false, d.Tk, d.dk, d.Tq, scale, ds, d.Tq * d.Tk, qv.data<float>(),
                d.Tq * d.dk, 1.0f, k.grad_buffer().data<float>(), BH);
  });
  return y;
}

}  // namespace attn
