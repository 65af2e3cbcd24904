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

namespace {

// Attention with score s over heads q [B, h, Tq, d_q] and k, v [B, h, S, d]: the fused op of
// ops/attention.h, its scores the product of queries and keys (scaled_dot, dot, bilinear after
// projecting the queries) or, for additive, computed here and given to it.
Var heads_attention(const AttentionScore& s, const Var& q, const Var& k, const Var& v, const AttentionMask& mask,
                    AttentionOptions o) {
  const int64_t B = q.size(0), h = q.size(1), Tq = q.size(2), S = k.size(2);
  switch (s.kind) {
    case ScoreKind::scaled_dot:  // e = q^T k / sqrt(d_k)
      o.scale = 0.0f;
      return scaled_dot_product_attention(q, k, v, mask, o);
    case ScoreKind::dot:  // e = q^T k
      o.scale = 1.0f;
      return scaled_dot_product_attention(q, k, v, mask, o);
    case ScoreKind::bilinear: {  // e = q^T W k = (q W) k
      Var qW = reshape(matmul(reshape(q, {B * h * Tq, q.size(3)}), s.W, false, false, s.precision),
                       {B, h, Tq, s.W.size(1)});
      o.scale = 1.0f;
      return scaled_dot_product_attention(qW, k, v, mask, o);
    }
    case ScoreKind::additive: {  // e = v_a^T tanh(W_a q + U_a k), heads folded into the batch
      Var keys = score_keys(s, reshape(k, {B * h, S, k.size(3)}));
      Var e = reshape(attention_scores(s, reshape(q, {B * h, Tq, q.size(3)}), keys), {B, h, Tq, S});
      return attention_from_scores(e, v, mask, o);
    }
  }
  fail("attention: unknown score kind");
}

// A mask of attend() (nonzero = not attended, [B, 1, S] or [B, S]) as a key padding mask.
Tensor key_padding_of(const Tensor& mask, int64_t B, int64_t S) {
  if (!mask.defined()) return Tensor();
  if (!(mask.numel() == B * S && (mask.dim() == 2 || (mask.dim() == 3 && mask.size(1) == 1))))
    fail("attend: the mask must be [B, 1, S] or [B, S] (", B, ", ", S, "), got ", shape_str(mask.shape()));
  Tensor m = mask.contiguous(), pad = Tensor::empty({B, S}, DType::i32);
  for (int64_t i = 0; i < B * S; ++i)
    pad.data<int32_t>()[i] = m.dtype() == DType::i32 ? m.data<int32_t>()[i] != 0 : m.data<float>()[i] != 0.0f;
  return pad;
}

}  // namespace

Var attend(const AttentionScore& s, const Var& q, const Var& keys, const Var& values, const Tensor& mask,
           Tensor* weights) {
  if (!(q.dim() == 3 && keys.dim() == 3 && values.dim() == 3 && q.size(0) == keys.size(0) &&
        values.size(0) == keys.size(0) && values.size(1) == keys.size(1)))
    fail("attend: queries ", shape_str(q.shape()), ", keys ", shape_str(keys.shape()), " and values ",
         shape_str(values.shape()), " must be [B, Tq, d], [B, S, d] and [B, S, d_v]");
  const int64_t B = q.size(0), Tq = q.size(1), S = keys.size(1);
  AttentionMask m;
  m.key_padding = key_padding_of(mask, B, S);
  AttentionOptions o;
  o.weights = weights;
  // one head: [B, 1, T, d]; the keys are score_keys' (U_a k + b for additive)
  const Var q1 = reshape(q, {B, 1, Tq, q.size(2)}), values1 = reshape(values, {B, 1, S, values.size(2)});
  Var c;
  if (s.kind == ScoreKind::additive) {
    Var e = reshape(attention_scores(s, q, keys), {B, 1, Tq, S});
    c = attention_from_scores(e, values1, m, o);
  } else {
    c = heads_attention(s, q1, reshape(keys, {B, 1, S, keys.size(2)}), values1, m, o);
  }
  if (weights) *weights = weights->reshape({B, Tq, S});  // alpha [B, Tq, S]
  return reshape(c, {B, Tq, values.size(2)});  // c = sum_i alpha_i v_i   [B, Tq, d_v]
}

Var multi_head_attend(const AttentionScore& s, const Var& q, const Var& k, const Var& v,
                      const AttentionMask& mask, const AttentionOptions& options) {
  if (!(q.dim() == 4 && k.dim() == 4 && v.dim() == 4))
    fail("multi-head attention: q, k, v must be ",
         "[B, h, T, d_k], got ", shape_str(q.shape()), ", ", shape_str(k.shape()), ", ", shape_str(v.shape()));
  return heads_attention(s, q, k, v, mask, options);  // [B, h, Tq, d_v]
}

}  // namespace attn
