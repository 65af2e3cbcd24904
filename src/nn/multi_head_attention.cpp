#include "attn/nn/multi_head_attention.h"

#include <cstring>

#include "attn/error.h"

namespace attn {
namespace {

// [batch, len, d_model] -> [batch, heads, len, d_k]
Var split_heads(const Var& x, int64_t heads) {
  int64_t B = x.size(0), T = x.size(1), d = x.size(2);
  return transpose(reshape(x, {B, T, heads, d / heads}), 1, 2);
}

// [batch, heads, len, d_k] -> [batch, len, d_model]
Var merge_heads(const Var& x) {
  int64_t B = x.size(0), h = x.size(1), T = x.size(2), dk = x.size(3);
  return reshape(transpose(x, 1, 2), {B, T, h * dk});
}

AttentionOptions options_for(const Context& ctx, Tensor* weights) {
  AttentionOptions o;
  if (ctx.training && ctx.dropout > 0.0f) {
    o.dropout = ctx.dropout;
    o.rng = ctx.rng;
  }
  o.weights = weights;
  return o;
}

// head_i = Attention(Q_i, K_i, V_i): fused for scaled_dot, else the unfused score path.
Var attention_heads(const MultiHeadAttention& m, const Var& q, const Var& k, const Var& v,
                    const AttentionMask& mask, const AttentionOptions& o) {
  if (m.score.kind == ScoreKind::scaled_dot) return scaled_dot_product_attention(q, k, v, mask, o);
  return multi_head_attend(m.score, q, k, v, mask, o);
}

}  // namespace

Var self_attention(const MultiHeadAttention& m, const Var& x, const AttentionMask& mask,
                   const Context& ctx, Tensor* weights) {
  int64_t d = x.size(2);
  // [Q K V] = x [W^Q; W^K; W^V]^T + b                         [batch, len, 3 d_model]
  Var qkv = linear(x, m.W_in, m.b_in);
  if (m.score.kind == ScoreKind::scaled_dot) {
    // head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), each head read in place from [Q K V] and
    // Concat(head_1, ..., head_h) written side by side         [batch, len, d_model]
    Var heads = packed_attention({qkv, 0, d}, {qkv, d, d}, {qkv, 2 * d, d}, m.heads, mask,
                                 options_for(ctx, weights));
    return forward(m.out, heads);  // Concat(...) W^O
  }
  std::vector<Var> p = split(qkv, {d, d, d}, 2);
  // head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)              [batch, heads, len, d_k]
  Var heads = attention_heads(m, split_heads(p[0], m.heads), split_heads(p[1], m.heads),
                              split_heads(p[2], m.heads), mask, options_for(ctx, weights));
  // Concat(head_1, ..., head_h) W^O                            [batch, len, d_model]
  return forward(m.out, merge_heads(heads));
}

Var cross_attention(const MultiHeadAttention& m, const Var& x, const Var& memory,
                    const AttentionMask& mask, const Context& ctx, Tensor* weights) {
  int64_t d = x.size(2);
  // Q = x W^Q + b^Q                                            [batch, tq, d_model]
  Var q = linear(x, slice(m.W_in, 0, 0, d), slice(m.b_in, 0, 0, d));
  // [K V] = memory [W^K; W^V]^T + b                            [batch, tk, 2 d_model]
  Var kv = linear(memory, slice(m.W_in, 0, d, 3 * d), slice(m.b_in, 0, d, 3 * d));
  if (m.score.kind == ScoreKind::scaled_dot) {
    Var heads = packed_attention({q, 0, d}, {kv, 0, d}, {kv, d, d}, m.heads, mask, options_for(ctx, weights));
    return forward(m.out, heads);
  }
  std::vector<Var> p = split(kv, {d, d}, 2);
  Var heads = attention_heads(m, split_heads(q, m.heads), split_heads(p[0], m.heads),
                              split_heads(p[1], m.heads), mask, options_for(ctx, weights));
  return forward(m.out, merge_heads(heads));
}

void project_memory(const MultiHeadAttention& m, const Tensor& memory, Tensor* k, Tensor* v) {
  NoGrad no_grad;
  int64_t d = memory.size(2);
  Var kv = linear(Var(memory), slice(m.W_in, 0, d, 3 * d), slice(m.b_in, 0, d, 3 * d));
  std::vector<Var> p = split(kv, {d, d}, 2);
  *k = split_heads(p[0], m.heads).value().contiguous();
  *v = split_heads(p[1], m.heads).value().contiguous();
}

static void append(Tensor& buffer, int64_t length, const Tensor& step) {
  // buffer [B, h, capacity, d_k]; step [B, h, 1, d_k] goes to position `length`.
  int64_t B = step.size(0), h = step.size(1), dk = step.size(3);
  if (!buffer.defined() || buffer.size(2) <= length) {
    int64_t capacity = std::max<int64_t>(16, 2 * (buffer.defined() ? buffer.size(2) : 0));
    Tensor grown = Tensor::empty({B, h, capacity, dk});
    if (buffer.defined() && length > 0)
      grown.slice(2, 0, length).copy_from(buffer.slice(2, 0, length));
    buffer = grown;
  }
  buffer.slice(2, length, length + 1).copy_from(step);
}

Tensor self_attention_step(const MultiHeadAttention& m, const Tensor& x, KVCache& cache, Tensor* weights) {
  NoGrad no_grad;
  int64_t d = x.size(2);
  Var qkv = linear(Var(x), m.W_in, m.b_in);  // [batch, 1, 3 d_model]
  std::vector<Var> p = split(qkv, {d, d, d}, 2);
  Tensor k = split_heads(p[1], m.heads).value(), v = split_heads(p[2], m.heads).value();
  append(cache.k, cache.length, k);
  append(cache.v, cache.length, v);
  cache.length += 1;
  // The new position sees itself and every earlier one: no mask needed.
  Var keys(cache.k.slice(2, 0, cache.length)), values(cache.v.slice(2, 0, cache.length));
  AttentionOptions o;
  o.weights = weights;
  Var heads = attention_heads(m, split_heads(p[0], m.heads), keys, values, {}, o);
  return forward(m.out, merge_heads(heads)).value();
}

Tensor cross_attention_cached(const MultiHeadAttention& m, const Tensor& x, const Tensor& k,
                              const Tensor& v, const AttentionMask& mask, Tensor* weights) {
  NoGrad no_grad;
  int64_t d = x.size(2);
  Var q = linear(Var(x), slice(m.W_in, 0, 0, d), slice(m.b_in, 0, 0, d));
  AttentionOptions o;
  o.weights = weights;
  Var heads = attention_heads(m, split_heads(q, m.heads), Var(k), Var(v), mask, o);
  return forward(m.out, merge_heads(heads)).value();
}

Tensor select_rows(const Tensor& t, const std::vector<int64_t>& rows) {
  Tensor src = t.contiguous();
  Shape s = src.shape();
  int64_t row = src.numel() / s[0];
  s[0] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::empty(s, src.dtype());
  size_t bytes = static_cast<size_t>(row) * dtype_size(src.dtype());
  for (size_t i = 0; i < rows.size(); ++i) {
    check(rows[i] >= 0 && rows[i] < src.size(0), "select_rows: row ", rows[i], " of ", src.size(0));
    std::memcpy(static_cast<char*>(out.raw_data()) + i * bytes,
                static_cast<const char*>(src.raw_data()) + rows[i] * bytes, bytes);
  }
  return out;
}

void select_rows(KVCache& cache, const std::vector<int64_t>& rows) {
  if (!cache.k.defined()) return;
  cache.k = select_rows(cache.k, rows);
  cache.v = select_rows(cache.v, rows);
}

}  // namespace attn
