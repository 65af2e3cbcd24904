#include "attn/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/attend_rows.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/vexp.h"
#include "attn/ops/dropout.h"
#include "grad_target.h"

// One (batch, head) block at a time, each on one thread: S = Q K^T / sqrt(d_k), masks, softmax,
// dropout and O = P V stay in the cache, and the heads are read and written in whatever layout
// the caller has them ([B, H, T, d] tensors and views, or heads side by side in [B, T, width]),
// so that nothing is split, merged or copied around the products.
namespace attn {

HeadsLayout heads_of(const Tensor& t) {
  return {static_cast<float*>(t.raw_data()), t.strides()[0], t.strides()[1], t.strides()[2]};
}

HeadsLayout heads_side_by_side(const Tensor& x, int64_t col, int64_t d) {
  return {static_cast<float*>(x.raw_data()) + col, x.size(1) * x.size(2), d, x.size(2)};
}

namespace {

using Heads = HeadsLayout;

struct Dims {
  int64_t B, H, Tq, Tk, dk, dv;
};

struct Dropout {
  float p = 0.0f;
  uint64_t seed = 0, first = 0;  // stream index of element 0 of P
};

// C = alpha op(A) op(B) + beta C for one block, on the calling thread (kernels/gemm.h: the kernel
// the dispatch table gives an attention block).
void block_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_attention_block({ta, tb, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc});
}

// Rows of one block: masked keys (padding; for causal attention the keys after the query) get
// weight 0; the rest softmax(S). A row with every key masked is all zeros.
void masked_softmax(float* S, int64_t b, const Dims& d, const int32_t* pad, bool causal) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int32_t* padb = pad ? pad + b * d.Tk : nullptr;
  for (int64_t i = 0; i < d.Tq; ++i) {
    float* row = S + i * d.Tk;
    int64_t end = causal ? std::min(d.Tk, std::max<int64_t>(0, i + d.Tk - d.Tq + 1)) : d.Tk;
    if (padb)
      for (int64_t j = 0; j < end; ++j)
        if (padb[j]) row[j] = ninf;
    float mx = max_of(row, end);
    if (mx == ninf) end = 0;
    float sum = exp_shifted(row, row, end, mx);  // row_j = exp(row_j - max), vectorised
    float inv = end ? 1.0f / sum : 0.0f;
    for (int64_t j = 0; j < end; ++j) row[j] *= inv;
    for (int64_t j = end; j < d.Tk; ++j) row[j] = 0.0f;
  }
}

// Forward over every block: P = softmax(mask(S)), S = Q K^T scale or the given scores (dense
// [B, H, Tq, Tk]); Pd = P M (dropout; Pd may be P); O = Pd V.
void forward_blocks(const Dims& d, float scale, const Heads& q, const Heads& k, const Heads& v,
                    const Heads& o, const AttentionMask& mask, const Dropout& drop, float* P, float* Pd,
                    const float* scores) {
  const int32_t* pad = mask.key_padding.defined() ? mask.key_padding.data<int32_t>() : nullptr;
  const int64_t block = d.Tq * d.Tk;
  parallel_for(d.B * d.H, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      int64_t b = p / d.H, h = p % d.H;
      float* S = P + p * block;
      // S = Q K^T / sqrt(d_k), or the given scores              [Tq, Tk]
      if (scores)
        std::copy(scores + p * block, scores + (p + 1) * block, S);
      else
        block_gemm(false, true, d.Tq, d.Tk, d.dk, scale, q.at(b, h), q.ld, k.at(b, h), k.ld, 0.0f, S, d.Tk);
      masked_softmax(S, b, d, pad, mask.causal);
      float* Sd = Pd + p * block;
      if (drop.p > 0.0f) {
        // Pd = P M, M from the stream at the element's index in [B, H, Tq, Tk]
        dropout_mask(Sd, block, drop.p, drop.seed, drop.first + static_cast<uint64_t>(p * block));
        for (int64_t i = 0; i < block; ++i) Sd[i] *= S[i];
      }
      // O = Pd V                                               [Tq, dv]
      block_gemm(false, false, d.Tq, d.dv, d.Tk, 1.0f, Sd, d.Tk, v.at(b, h), v.ld, 0.0f, o.at(b, h), o.ld);
    }
  });
}

// Backward over every block, accumulating into dq, dk, dv (those with data == nullptr skipped):
//   dV = Pd^T dO;  dPd = dO V^T;  dS = P (dP - rowsum(dP P)) with dP = dPd M, which is
//   dS = dPd Pd - P rowsum(dPd Pd);  dQ = dS K scale;  dK = dS^T Q scale,
// or, for given scores, dS added to dscores (dense [B, H, Tq, Tk]).
void backward_blocks(const Dims& d, float scale, const Heads& q, const Heads& k, const Heads& v,
                     const Heads& go, const float* P, const float* Pd, const Heads& dq, const Heads& dk,
                     const Heads& dv, float* dscores = nullptr) {
  const int64_t block = d.Tq * d.Tk;
  parallel_for(d.B * d.H, 1, [&](int64_t p0, int64_t p1) {
    std::vector<float> dS(static_cast<size_t>(block));
    for (int64_t p = p0; p < p1; ++p) {
      int64_t b = p / d.H, h = p % d.H;
      const float* Pb = P + p * block;
      const float* Pdb = Pd + p * block;
      if (dv.data)
        block_gemm(true, false, d.Tk, d.dv, d.Tq, 1.0f, Pdb, d.Tk, go.at(b, h), go.ld, dv.beta, dv.at(b, h), dv.ld);
      if (!dq.data && !dk.data && !dscores) continue;
      block_gemm(false, true, d.Tq, d.Tk, d.dv, 1.0f, go.at(b, h), go.ld, v.at(b, h), v.ld, 0.0f, dS.data(), d.Tk);
      for (int64_t i = 0; i < d.Tq; ++i) {
        float* row = dS.data() + i * d.Tk;
        const float* pr = Pb + i * d.Tk;
        const float* pdr = Pdb + i * d.Tk;
        for (int64_t j = 0; j < d.Tk; ++j) row[j] *= pdr[j];
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < d.Tk; ++j) dot += row[j];
        for (int64_t j = 0; j < d.Tk; ++j) row[j] -= pr[j] * dot;
      }
      if (dscores) {
        float* de = dscores + p * block;
        for (int64_t i = 0; i < block; ++i) de[i] += dS[static_cast<size_t>(i)];
        continue;
      }
      if (dq.data)
        block_gemm(false, false, d.Tq, d.dk, d.Tk, scale, dS.data(), d.Tk, k.at(b, h), k.ld, dq.beta, dq.at(b, h), dq.ld);
      if (dk.data)
        block_gemm(true, false, d.Tk, d.dk, d.Tq, scale, dS.data(), d.Tk, q.at(b, h), q.ld, dk.beta, dk.at(b, h), dk.ld);
    }
  });
}

// P and, with dropout, Pd = P M: [B, H, Tq, Tk] each (Pd is P without dropout).
struct Weights {
  Tensor P, Pd;
};

Weights run_forward(const Dims& d, float scale, const Heads& q, const Heads& k, const Heads& v,
                    const Heads& o, const AttentionMask& mask, const AttentionOptions& options,
                    const float* scores = nullptr) {
  Weights w;
  w.P = Tensor::empty({d.B, d.H, d.Tq, d.Tk});
  w.Pd = w.P;
  Dropout drop;
  if (options.dropout > 0.0f) {
    check(options.rng != nullptr, "attention: dropout needs a random stream");
    w.Pd = Tensor::empty(w.P.shape());
    drop = {options.dropout, options.rng->seed, options.rng->take(static_cast<uint64_t>(w.P.numel()))};
  }
  forward_blocks(d, scale, q, k, v, o, mask, drop, w.P.data<float>(), w.Pd.data<float>(), scores);
  if (options.weights) *options.weights = w.P;
  return w;
}

void check_mask(const AttentionMask& mask, const Dims& d) {
  if (mask.key_padding.defined())
    if (!(mask.key_padding.dtype() == DType::i32 && mask.key_padding.shape() == Shape{d.B, d.Tk} &&
          mask.key_padding.is_contiguous()))
      fail("attention: key padding mask must be dense I32 [", d.B, ", ", d.Tk, "], got ",
           shape_str(mask.key_padding.shape()));
}

// The tensor itself when its last dimension has unit stride (a view from split_heads or a
// cache slice), else a dense copy.
Tensor unit_last(const Tensor& t) { return t.strides().back() == 1 ? t : t.contiguous(); }

float scale_for(const AttentionOptions& o, int64_t dk) {
  return o.scale > 0 ? o.scale : 1.0f / std::sqrt(static_cast<float>(dk));
}

// Whether the packed heads that read x (among q, k, v) cover each of x's columns exactly once.
bool covers_once(const PackedHeads* const (&all)[3], const Var& x) {
  std::vector<std::pair<int64_t, int64_t>> cols;
  for (const PackedHeads* p : all)
    if (p->x.node() == x.node()) cols.emplace_back(p->col, p->width);
  std::sort(cols.begin(), cols.end());
  int64_t next = 0;
  for (const auto& [c, w] : cols) {
    if (c != next) return false;
    next = c + w;
  }
  return next == x.value().size(-1);
}

}  // namespace

Var scaled_dot_product_attention(const Var& q, const Var& k, const Var& v,
                                 const AttentionMask& mask, const AttentionOptions& options) {
  Tensor qv = unit_last(q.value()), kv = unit_last(k.value()), vv = unit_last(v.value());
  if (!(qv.dim() == 4 && kv.dim() == 4 && vv.dim() == 4))
    fail("attention: q, k, v must be ",
        "[batch, heads, len, d], got ", shape_str(qv.shape()), ", ", shape_str(kv.shape()), ", ",
        shape_str(vv.shape()));
  Dims d{qv.size(0), qv.size(1), qv.size(2), kv.size(2), qv.size(3), vv.size(3)};
  if (!(kv.size(0) == d.B && vv.size(0) == d.B && kv.size(1) == d.H && vv.size(1) == d.H &&
            kv.size(3) == d.dk && vv.size(2) == d.Tk))
    fail("attention: shapes do not agree: q ", shape_str(qv.shape()), ", k ", shape_str(kv.shape()),
        ", v ", shape_str(vv.shape()));
  check_mask(mask, d);
  float scale = scale_for(options, d.dk);
  // O = softmax(Q K^T / sqrt(d_k)) V                          [B, H, Tq, dv]
  Tensor out = Tensor::empty({d.B, d.H, d.Tq, d.dv});
  Weights w = run_forward(d, scale, heads_of(qv), heads_of(kv), heads_of(vv), heads_of(out), mask, options);

  bool grad = needs_grad({&q, &k, &v});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([q, k, v, qv, kv, vv, y, w, d, scale]() mutable {
    if (!y.grad().defined()) return;
    Tensor gO = unit_last(y.grad());
    auto grad_heads = [](const Var& x) { return x.requires_grad() ? heads_of(x.grad_buffer()) : Heads{}; };
    backward_blocks(d, scale, heads_of(qv), heads_of(kv), heads_of(vv), heads_of(gO), w.P.data<float>(),
                    w.Pd.data<float>(), grad_heads(q), grad_heads(k), grad_heads(v));
  });
  return y;
}

Var packed_attention(const PackedHeads& q, const PackedHeads& k, const PackedHeads& v, int64_t heads,
                     const AttentionMask& mask, const AttentionOptions& options) {
  Tensor qx = q.x.value().contiguous(), kx = k.x.value().contiguous(), vx = v.x.value().contiguous();
  if (!(qx.dim() == 3 && kx.dim() == 3 && vx.dim() == 3))
    fail("attention: packed q, k, v must be [batch, len, width], got ", shape_str(qx.shape()), ", ",
         shape_str(kx.shape()), ", ", shape_str(vx.shape()));
  check(heads >= 1 && q.width % heads == 0 && k.width == q.width && v.width % heads == 0,
        "attention: widths q ", q.width, ", k ", k.width, ", v ", v.width, " for ", heads, " heads");
  Dims d{qx.size(0), heads, qx.size(1), kx.size(1), q.width / heads, v.width / heads};
  if (!(kx.size(0) == d.B && vx.size(0) == d.B && vx.size(1) == d.Tk && q.col >= 0 && k.col >= 0 &&
        v.col >= 0 && q.col + q.width <= qx.size(2) && k.col + k.width <= kx.size(2) &&
        v.col + v.width <= vx.size(2)))
    fail("attention: packed shapes do not agree: q ", shape_str(qx.shape()), " columns ", q.col, "+", q.width,
         ", k ", shape_str(kx.shape()), " columns ", k.col, "+", k.width, ", v ", shape_str(vx.shape()),
         " columns ", v.col, "+", v.width);
  check_mask(mask, d);
  float scale = scale_for(options, d.dk);
  // Concat(head_1, ..., head_h)                               [B, Tq, heads dv]
  Tensor out = Tensor::empty({d.B, d.Tq, heads * d.dv});
  Weights w = run_forward(d, scale, heads_side_by_side(qx, q.col, d.dk), heads_side_by_side(kx, k.col, d.dk),
                          heads_side_by_side(vx, v.col, d.dv), heads_side_by_side(out, 0, d.dv), mask, options);

  bool grad = needs_grad({&q.x, &k.x, &v.x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([q, k, v, qx, kx, vx, y, w, d, scale]() mutable {
    if (!y.grad().defined()) return;
    Tensor gO = y.grad().contiguous();
    // A gradient not made yet is left uninitialised and its blocks overwritten (beta 0) when the
    // heads written into it cover each of its columns once (Q, K and V side by side); else it is
    // zeroed first (grad_buffer) and the blocks add to it.
    const PackedHeads* all[3] = {&q, &k, &v};
    float beta[3];
    for (int i = 0; i < 3; ++i) {
      const Var& x = all[i]->x;
      beta[i] = 1.0f;
      int same = -1;  // an earlier operand that is the same Var: decided there
      for (int j = 0; j < i; ++j)
        if (same < 0 && all[j]->x.node() == x.node()) same = j;
      if (same >= 0)
        beta[i] = beta[same];
      else if (x.requires_grad() && !x.node()->grad.defined() && covers_once(all, x))
        detail::grad_target(x, &beta[i]);  // a new, uninitialised buffer; beta 0
    }
    auto grad_heads = [](const PackedHeads& p, int64_t dh, float b) {
      if (!p.x.requires_grad()) return Heads{};
      Heads h = heads_side_by_side(p.x.grad_buffer(), p.col, dh);
      h.beta = b;
      return h;
    };
    backward_blocks(d, scale, heads_side_by_side(qx, q.col, d.dk), heads_side_by_side(kx, k.col, d.dk),
                    heads_side_by_side(vx, v.col, d.dv), heads_side_by_side(gO, 0, d.dv), w.P.data<float>(),
                    w.Pd.data<float>(), grad_heads(q, d.dk, beta[0]), grad_heads(k, d.dk, beta[1]),
                    grad_heads(v, d.dv, beta[2]));
  });
  return y;
}

Var attention_from_scores(const Var& e, const Var& v, const AttentionMask& mask, const AttentionOptions& options) {
  Tensor ev = e.value().contiguous(), vv = unit_last(v.value());
  if (!(ev.dim() == 4 && vv.dim() == 4 && vv.size(0) == ev.size(0) && vv.size(1) == ev.size(1) &&
        vv.size(2) == ev.size(3)))
    fail("attention: scores must be [batch, heads, queries, keys] and values [batch, heads, keys, d_v], got ",
         shape_str(ev.shape()), " and ", shape_str(vv.shape()));
  Dims d{ev.size(0), ev.size(1), ev.size(2), ev.size(3), 0, vv.size(3)};
  check_mask(mask, d);
  // O = softmax(mask(e)) V                                    [B, H, Tq, dv]
  Tensor out = Tensor::empty({d.B, d.H, d.Tq, d.dv});
  Weights w = run_forward(d, 1.0f, Heads{}, Heads{}, heads_of(vv), heads_of(out), mask, options, ev.data<float>());
  bool grad = needs_grad({&e, &v});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([e, v, vv, y, w, d]() mutable {
    if (!y.grad().defined()) return;
    Tensor gO = unit_last(y.grad());
    float* de = e.requires_grad() ? e.grad_buffer().data<float>() : nullptr;
    backward_blocks(d, 1.0f, Heads{}, Heads{}, heads_of(vv), heads_of(gO), w.P.data<float>(), w.Pd.data<float>(),
                    Heads{}, Heads{}, v.requires_grad() ? heads_of(v.grad_buffer()) : Heads{}, de);
  });
  return y;
}

namespace {

// One (row, head) of attention_one_query: p = softmax(s) over the keys, out = sum_j p_j v_j.
void one_query_block(const OneQuery& a, int64_t b, int64_t h, float scale, std::vector<float>& P,
                     std::vector<const float*>& krow, std::vector<const float*>& vrow, float* ob) {
  const int64_t r = a.kv_rows ? a.kv_rows[b] : b;
  const float* qb = a.q.at(b, h);
  int64_t keys = a.keys;
  if (a.history) {
    const std::vector<int32_t>& slots = (*a.history)[static_cast<size_t>(b)];
    const int64_t at = a.first ? a.first[b] : 0;
    keys = static_cast<int64_t>(slots.size());
    for (int64_t j = 0; j < keys; ++j) {
      krow[static_cast<size_t>(j)] = a.k.at(slots[static_cast<size_t>(j)], h) + (at + j) * a.k.ld;
      vrow[static_cast<size_t>(j)] = a.v.at(slots[static_cast<size_t>(j)], h) + (at + j) * a.v.ld;
    }
  }
  const int32_t* padb = a.key_padding.defined() ? a.key_padding.data<int32_t>() + r * a.keys : nullptr;
  // The keys up to the last one not padded: those after it would get p_j = exp(-inf) = 0,
  // which adds exactly nothing to the softmax's sum or to the output (the same bits).
  if (padb)
    while (keys > 0 && padb[keys - 1]) --keys;
  // s_j = scale q . k_j, -inf for padded keys
  if (a.history)
    scores_one_query_at(qb, krow.data(), keys, a.dk, scale, P.data());
  else
    scores_one_query(qb, a.k.at(r, h), a.k.ld, keys, a.dk, scale, P.data());
  if (padb)
    for (int64_t j = 0; j < keys; ++j)
      if (padb[j]) P[static_cast<size_t>(j)] = -std::numeric_limits<float>::infinity();
  const float mx = max_of(P.data(), keys);
  if (keys == 0 || mx == -std::numeric_limits<float>::infinity()) {
    std::fill(ob, ob + a.dk, 0.0f);
    return;
  }
  // p = softmax(s); out = sum_j p_j v_j
  const float inv = 1.0f / exp_shifted(P.data(), P.data(), keys, mx);
  for (int64_t j = 0; j < keys; ++j) P[static_cast<size_t>(j)] *= inv;
  if (a.history)
    weighted_rows_at(P.data(), vrow.data(), keys, a.dk, ob);
  else
    weighted_rows(P.data(), a.v.at(r, h), a.v.ld, keys, a.dk, ob);
}

}  // namespace

Tensor attention_one_query(const OneQuery& a) {
  check(!a.key_padding.defined() || (a.key_padding.dtype() == DType::i32 && a.key_padding.is_contiguous() &&
                                     a.key_padding.dim() == 2 && a.key_padding.size(1) == a.keys),
        "attention: key padding mask must be dense I32 [rows, ", a.keys, "]");
  Tensor out = Tensor::empty({a.B, 1, a.H * a.dk});
  float* o = out.data<float>();
  const float scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(static_cast<float>(a.dk));
  parallel_for(a.B * a.H, 16, [&](int64_t p0, int64_t p1) {
    std::vector<float> P(static_cast<size_t>(a.keys));
    std::vector<const float*> krow(a.history ? a.keys : 0), vrow(a.history ? a.keys : 0);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / a.H, h = p % a.H;
      one_query_block(a, b, h, scale, P, krow, vrow, o + b * a.H * a.dk + h * a.dk);
    }
  });
  return out;
}

}  // namespace attn
