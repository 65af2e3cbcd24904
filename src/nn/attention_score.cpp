#include "attn/nn/attention_score.h"

#include <cmath>
#include <limits>

#include "attn/error.h"

namespace attn {

ScoreKind parse_score(const std::string& name) {
  if (name == "scaled_dot") return ScoreKind::scaled_dot;
  if (name == "dot") return ScoreKind::dot;
  if (name == "additive") return ScoreKind::additive;
  if (name == "bilinear") return ScoreKind::bilinear;
  fail("attention score must be scaled_dot, dot, additive or bilinear, got '", name, "'");
}

const char* score_name(ScoreKind kind) {
  switch (kind) {
    case ScoreKind::scaled_dot: return "scaled_dot";
    case ScoreKind::dot: return "dot";
    case ScoreKind::additive: return "additive";
    case ScoreKind::bilinear: return "bilinear";
  }
  return "?";
}

void prepare(AttentionScore& s, Precision p, Use use) {
  s.precision = p;  // int8 quantizes the weights of linear layers only: matmul runs it in f32
  if (s.U.W.defined()) prepare(s.U, p, use);
}

Var score_keys(const AttentionScore& s, const Var& k) {
  if (s.kind != ScoreKind::additive) return k;
  check(s.U.W.defined(), "additive attention: U_a is not set");
  return forward(s.U, k);  // U_a k + b                        [B, S, A]
}

Var attention_scores(const AttentionScore& s, const Var& q, const Var& keys) {
  if (!(q.dim() == 3 && keys.dim() == 3 && q.size(0) == keys.size(0)))
    fail("attention scores: queries ",
         shape_str(q.shape()), " and keys ", shape_str(keys.shape()), " must be [B, Tq, d] and [B, S, d]");
  const int64_t B = q.size(0), Tq = q.size(1), S = keys.size(1);
  switch (s.kind) {
    case ScoreKind::dot:
      // e = q^T k                                              [B, Tq, S]
      return matmul(q, keys, false, true, s.precision);
    case ScoreKind::scaled_dot:
      // e = q^T k / sqrt(d_k)                                  [B, Tq, S]
      return scale(matmul(q, keys, false, true, s.precision), 1.0f / std::sqrt(static_cast<float>(keys.size(2))));
    case ScoreKind::bilinear:
      // e = q^T W k = (q W) k                                   [B, Tq, d_k] -> [B, Tq, S]
      return matmul(matmul(q, s.W, false, false, s.precision), keys, false, true, s.precision);
    case ScoreKind::additive: {
      const int64_t A = keys.size(2);
      // W_a q                                                  [B, Tq, 1, A]
      Var wq = reshape(matmul(q, s.W, false, true, s.precision), {B, Tq, 1, A});
      // tanh(W_a q + U_a k)                                    [B, Tq, S, A]
      Var hidden = tanh(add(wq, reshape(keys, {B, 1, S, A})));
      // e = v_a^T tanh(...)                                    [B, Tq, S]
      return reshape(matmul(hidden, s.v, false, true, s.precision), {B, Tq, S});
    }
  }
  fail("attention scores: unknown score kind");
}

Var attend(const AttentionScore& s, const Var& q, const Var& keys, const Var& values, const Tensor& mask,
           Tensor* weights) {
  Var e = attention_scores(s, q, keys);  // [B, Tq, S]
  if (mask.defined()) e = masked_fill(e, mask, -std::numeric_limits<float>::infinity());
  // alpha = softmax(e) over the source positions             [B, Tq, S]
  Var alpha = softmax(e);
  if (weights) *weights = alpha.value();
  // c = sum_i alpha_i v_i                                     [B, Tq, d_v]
  return matmul(alpha, values, false, false, s.precision);
}

namespace {

// 1 where query i must not see key j: padding, and j > i + (S - Tq) when causal. [B, 1, Tq, S]
Tensor combined_mask(const AttentionMask& mask, int64_t B, int64_t Tq, int64_t S) {
  Tensor m = Tensor::zeros({B, 1, Tq, S});
  float* pm = m.data<float>();
  Tensor pad = mask.key_padding.defined() ? mask.key_padding.contiguous() : Tensor();
  if (pad.defined() && pad.shape() != Shape{B, S})
    fail("attention: key padding mask ", shape_str(pad.shape()), " should be [", B, ", ", S, "]");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t j = 0; j < S; ++j) {
        bool padded = pad.defined() && pad.data<int32_t>()[b * S + j] != 0;
        bool future = mask.causal && j > i + (S - Tq);
        pm[(b * Tq + i) * S + j] = padded || future ? 1.0f : 0.0f;
      }
  return m;
}

}  // namespace

Var multi_head_attend(const AttentionScore& s, const Var& q, const Var& k, const Var& v,
                      const AttentionMask& mask, const AttentionOptions& options) {
  if (!(q.dim() == 4 && k.dim() == 4 && v.dim() == 4))
    fail("multi-head attention: q, k, v must be ",
         "[B, h, T, d_k], got ", shape_str(q.shape()), ", ", shape_str(k.shape()), ", ", shape_str(v.shape()));
  const int64_t B = q.size(0), h = q.size(1), Tq = q.size(2), S = k.size(2), dk = q.size(3);
  // Heads folded into the batch                               [B*h, T, d_k]
  Var keys = score_keys(s, reshape(k, {B * h, S, k.size(3)}));
  Var e = attention_scores(s, reshape(q, {B * h, Tq, dk}), keys);
  e = reshape(e, {B, h, Tq, S});
  if (mask.key_padding.defined() || mask.causal)
    e = masked_fill(e, combined_mask(mask, B, Tq, S), -std::numeric_limits<float>::infinity());
  Var p = softmax(e);  // [B, h, Tq, S]
  if (options.weights) *options.weights = p.value();
  if (options.dropout > 0.0f) {
    check(options.rng != nullptr, "multi-head attention: dropout needs a random stream");
    p = dropout(p, options.dropout, *options.rng, true);
  }
  return matmul(p, v, false, false, s.precision);  // [B, h, Tq, d_v]
}

}  // namespace attn
