#include "attn/nn/multi_head_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/error.h"

namespace attn {
namespace {

// [batch, len, d_model] -> [batch, heads, len, d_k]
Var split_heads(const Var& x, int64_t heads, HeadSplit split = HeadSplit::standard) {
  int64_t B = x.size(0), T = x.size(1), d = x.size(2);
  // seed: Q.view(batch * heads, -1, d_k), the memory of each row cut in `heads` runs
  if (split == HeadSplit::seed) return reshape(x, {B, heads, T, d / heads});
  return transpose(reshape(x, {B, T, heads, d / heads}), 1, 2);
}

// [batch, heads, len, d_k] -> [batch, len, d_model]
Var merge_heads(const Var& x, HeadSplit split = HeadSplit::standard) {
  int64_t B = x.size(0), h = x.size(1), T = x.size(2), dk = x.size(3);
  if (split == HeadSplit::seed) return reshape(x, {B, T, h * dk});  // context.view(batch, -1, d)
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

// The single-query path applies: dot-product scores, one query, no attention weights asked for.
bool one_query_path(const MultiHeadAttention& m, const Tensor& x, const Tensor* weights) {
  return m.score.kind == ScoreKind::scaled_dot && x.size(1) == 1 && weights == nullptr;
}

// Concat(head_1, ..., head_h) from the packed projection [Q K V] [batch, len, 3 d_model]:
// [batch, len, d_model], before W^O.
Var self_attention_heads(const MultiHeadAttention& m, const Var& qkv, const AttentionMask& mask,
                         const Context& ctx, Tensor* weights) {
  const int64_t d = qkv.size(2) / 3;
  if (m.score.kind == ScoreKind::scaled_dot && m.split == HeadSplit::standard) {
    // head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), each head read in place from [Q K V] and
    // Concat(head_1, ..., head_h) written side by side         [batch, len, d_model]
    return packed_attention({qkv, 0, d}, {qkv, d, d}, {qkv, 2 * d, d}, m.heads, mask, options_for(ctx, weights));
  }
  std::vector<Var> p = split(qkv, {d, d, d}, 2);
  // head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)              [batch, heads, len, d_k]
  Var heads = attention_heads(m, split_heads(p[0], m.heads, m.split), split_heads(p[1], m.heads, m.split),
                              split_heads(p[2], m.heads, m.split), mask, options_for(ctx, weights));
  return merge_heads(heads, m.split);  // Concat(head_1, ..., head_h)    [batch, len, d_model]
}

}  // namespace

void prepare(MultiHeadAttention& m, AttentionKind kind, Precision p, Use use) {
  const int64_t d = m.W_in.size(1);
  const Tensor& W = m.W_in.value();
  if (use == Use::training || kind == AttentionKind::self) m.in_form = weight_form(W, p, use);
  if (use == Use::training || kind == AttentionKind::cross) {
    m.q_form = weight_form(W.slice(0, 0, d), p, use);          // W^Q       [d_model, d_model]
    m.kv_form = weight_form(W.slice(0, d, 3 * d), p, use);     // [W^K; W^V] [2 d_model, d_model]
  }
  prepare(m.out, p, use);
  prepare(m.score, p, use);
}

Var self_attention(const MultiHeadAttention& m, const Var& x, const AttentionMask& mask,
                   const Context& ctx, Tensor* weights) {
  // [Q K V] = x [W^Q; W^K; W^V]^T + b                         [batch, len, 3 d_model]
  Var qkv = linear(x, m.W_in, m.b_in, m.in_form);
  // MultiHead(x, x, x) = Concat(head_1, ..., head_h) W^O
  return forward_output(m.out, self_attention_heads(m, qkv, mask, ctx, weights), ctx);
}

Tensor self_attention(const MultiHeadAttention& m, const Tensor& x, const RealRows& rows, const AttentionMask& mask) {
  NoGrad no_grad;
  // [Q K V] = x [W^Q; W^K; W^V]^T + b, the real rows only       [1, rows, 3 d_model]
  Var qkv = linear(Var(x), m.W_in, m.b_in, m.in_form);
  // each sentence's rows back in place for the heads            [batch, len, 3 d_model]
  Var heads = self_attention_heads(m, Var(restore_padding(qkv.value(), rows)), mask, Context{}, nullptr);
  // Concat(head_1, ..., head_h) W^O, the real rows              [1, rows, d_model]
  return forward(m.out, Var(remove_padding(heads.value(), rows))).value();
}

Var cross_attention(const MultiHeadAttention& m, const Var& x, const Var& memory,
                    const AttentionMask& mask, const Context& ctx, Tensor* weights) {
  int64_t d = x.size(2);
  // Q = x W^Q + b^Q                                            [batch, tq, d_model]
  Var q = linear(x, slice(m.W_in, 0, 0, d), slice(m.b_in, 0, 0, d), m.q_form);
  // [K V] = memory [W^K; W^V]^T + b                            [batch, tk, 2 d_model]
  Var kv = linear(memory, slice(m.W_in, 0, d, 3 * d), slice(m.b_in, 0, d, 3 * d), m.kv_form);
  if (m.score.kind == ScoreKind::scaled_dot) {
    Var heads = packed_attention({q, 0, d}, {kv, 0, d}, {kv, d, d}, m.heads, mask, options_for(ctx, weights));
    return forward_output(m.out, heads, ctx);
  }
  std::vector<Var> p = split(kv, {d, d}, 2);
  Var heads = attention_heads(m, split_heads(q, m.heads), split_heads(p[0], m.heads),
                              split_heads(p[1], m.heads), mask, options_for(ctx, weights));
  return forward_output(m.out, merge_heads(heads), ctx);
}

void project_memory(const MultiHeadAttention& m, const Tensor& memory, Tensor* k, Tensor* v, const RealRows* rows) {
  NoGrad no_grad;
  int64_t d = memory.size(2);
  // [K V] = memory [W^K; W^V]^T + b                            [batch, tk, 2 d_model]
  const Var W_kv = slice(m.W_in, 0, d, 3 * d), b_kv = slice(m.b_in, 0, d, 3 * d);
  Var kv = rows ? Var(restore_padding(linear(Var(remove_padding(memory, *rows)), W_kv, b_kv, m.kv_form).value(), *rows))
                : linear(Var(memory), W_kv, b_kv, m.kv_form);
  std::vector<Var> p = split(kv, {d, d}, 2);
  *k = split_heads(p[0], m.heads).value().contiguous();
  *v = split_heads(p[1], m.heads).value().contiguous();
}

namespace {

// Room in a cache buffer [slots, h, capacity, d_k] for `slots` rows and position `length`: a
// bigger buffer, when needed, holds what the old one did.
void make_room(Tensor& buffer, int64_t slots, int64_t h, int64_t dk, int64_t length, int64_t first_capacity) {
  const int64_t old_slots = buffer.defined() ? buffer.size(0) : 0, old_cap = buffer.defined() ? buffer.size(2) : 0;
  if (old_slots >= slots && old_cap > length) return;
  const int64_t cap = old_cap > length ? old_cap
                                       : std::max({first_capacity, length + 1, old_cap + old_cap / 2});
  Tensor grown = Tensor::empty({std::max(slots, old_slots), h, cap, dk});
  if (old_slots > 0 && length > 0)
    grown.slice(0, 0, old_slots).slice(2, 0, length).copy_from(buffer.slice(2, 0, length));
  buffer = grown;
}

// Buffer positions [shift, length) of every slot move to [0, length - shift): room at the end
// once the rows that held the first positions have all left (continuous batching).
void move_down(Tensor& buffer, int64_t shift, int64_t length) {
  const int64_t rows = buffer.size(0) * buffer.size(1), cap = buffer.size(2), dk = buffer.size(3);
  float* base = buffer.data<float>();
  for (int64_t i = 0; i < rows; ++i)
    std::memmove(base + i * cap * dk, base + (i * cap + shift) * dk,
                 static_cast<size_t>((length - shift) * dk) * sizeof(float));
}

// Before writing buffer position `length`: when the buffer is full and no row reads its first
// quarter or more any more, those positions are dropped (so a decoder that rows keep joining runs
// in memory bounded by its rows' longest history); otherwise make_room grows it by half.
void drop_unread_positions(KVCache& cache) {
  if (cache.first.empty() || !cache.k.defined() || cache.length < cache.k.size(2)) return;
  const int64_t shift = *std::min_element(cache.first.begin(), cache.first.end());
  if (4 * shift < cache.k.size(2)) return;
  move_down(cache.k, shift, cache.length);
  move_down(cache.v, shift, cache.length);
  for (int64_t& f : cache.first) f -= shift;
  cache.length -= shift;
}

// Row r's newest key and value go to slot r at buffer position `length`, head by head, straight
// from the step's projections qkv [B, 1, 3 d_model] (K at columns d_model..2 d_model, V after).
void append(KVCache& cache, const Tensor& qkv, int64_t h) {
  const int64_t B = qkv.size(0), d = qkv.size(2) / 3, dk = d / h;
  if (cache.history.empty()) cache.history.resize(static_cast<size_t>(B));
  check(static_cast<int64_t>(cache.history.size()) == B, "self_attention_step: ", B, " rows for a cache of ",
        cache.history.size());
  drop_unread_positions(cache);
  const int64_t t = cache.length;
  make_room(cache.k, B, h, dk, t, cache.first_capacity);
  make_room(cache.v, B, h, dk, t, cache.first_capacity);
  const float* src = qkv.data<float>();
  float* K = cache.k.data<float>();
  float* V = cache.v.data<float>();
  const int64_t cap = cache.k.size(2);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < h; ++j) {
      const int64_t at = ((b * h + j) * cap + t) * dk;
      std::memcpy(K + at, src + b * 3 * d + d + j * dk, static_cast<size_t>(dk) * sizeof(float));
      std::memcpy(V + at, src + b * 3 * d + 2 * d + j * dk, static_cast<size_t>(dk) * sizeof(float));
    }
  for (int64_t r = 0; r < B; ++r) cache.history[static_cast<size_t>(r)].push_back(static_cast<int32_t>(r));
  cache.length = t + 1;
}

// The cache's keys or values as [B, h, length, d_k], each row's history gathered.
Tensor gathered(const Tensor& buffer, const KVCache& cache) {
  check(cache.first.empty(), "self_attention_step: attention weights of rows that joined at different steps");
  const int64_t B = static_cast<int64_t>(cache.history.size()), h = buffer.size(1), dk = buffer.size(3);
  Tensor out = Tensor::empty({B, h, cache.length, dk});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t t = 0; t < cache.length; ++t)
        std::memcpy(out.data<float>() + ((b * h + j) * cache.length + t) * dk,
                    buffer.data<float>() + ((cache.history[static_cast<size_t>(b)][static_cast<size_t>(t)] * h + j) *
                                                buffer.size(2) + t) * dk,
                    static_cast<size_t>(dk) * sizeof(float));
  return out;
}

}  // namespace

Tensor self_attention_step(const MultiHeadAttention& m, const Tensor& x, KVCache& cache, Tensor* weights) {
  NoGrad no_grad;
  int64_t d = x.size(2);
  Var qkv = linear(Var(x), m.W_in, m.b_in, m.in_form);  // [batch, 1, 3 d_model]
  const Tensor qkv_rows = qkv.value().contiguous();  // [Q K V] of each row
  check(qkv_rows.size(1) == 1, "self_attention_step: one position a step, got ", qkv_rows.size(1));
  append(cache, qkv_rows, m.heads);
  // The new position sees itself and every earlier one: no mask needed.
  if (one_query_path(m, x, weights)) {
    OneQuery a;
    a.dk = d / m.heads;
    a.q = heads_side_by_side(qkv_rows, 0, a.dk);
    a.k = heads_of(cache.k);
    a.v = heads_of(cache.v);
    a.B = x.size(0);
    a.H = m.heads;
    a.keys = 0;
    for (const auto& h : cache.history) a.keys = std::max(a.keys, static_cast<int64_t>(h.size()));
    a.history = &cache.history;
    a.first = cache.first.empty() ? nullptr : cache.first.data();
    Tensor heads = attention_one_query(a);
    return forward(m.out, Var(heads)).value();  // Concat(...) W^O
  }
  Var keys(gathered(cache.k, cache)), values(gathered(cache.v, cache));
  AttentionOptions o;
  o.weights = weights;
  Var heads = attention_heads(m, split_heads(slice(qkv, 2, 0, d), m.heads), keys, values, {}, o);
  return forward(m.out, merge_heads(heads)).value();
}

Tensor cross_attention_cached(const MultiHeadAttention& m, const Tensor& x, const Tensor& k,
                              const Tensor& v, const AttentionMask& mask, Tensor* weights) {
  return cross_attention_cached(m, x, k, v, mask, {}, weights);
}

Tensor cross_attention_cached(const MultiHeadAttention& m, const Tensor& x, const Tensor& k,
                              const Tensor& v, const AttentionMask& mask, const std::vector<int64_t>& rows,
                              Tensor* weights) {
  NoGrad no_grad;
  int64_t d = x.size(2);
  check(rows.empty() || static_cast<int64_t>(rows.size()) == x.size(0), "cross_attention_cached: ", rows.size(),
        " memory rows for ", x.size(0), " queries");
  Var q = linear(Var(x), slice(m.W_in, 0, 0, d), slice(m.b_in, 0, 0, d), m.q_form);
  if (one_query_path(m, x, weights) && k.is_contiguous() && v.is_contiguous()) {
    const Tensor& pad = mask.key_padding;
    check(!pad.defined() || (pad.dtype() == DType::i32 && pad.is_contiguous() &&
                             pad.shape() == Shape{k.size(0), k.size(2)}),
          "cross_attention_cached: key padding mask must be dense I32 [", k.size(0), ", ", k.size(2), "]");
    for (int64_t r : rows) check(r >= 0 && r < k.size(0), "cross_attention_cached: memory row ", r, " of ", k.size(0));
    const Tensor qv = q.value().contiguous();
    OneQuery a;
    a.dk = d / m.heads;
    a.q = heads_side_by_side(qv, 0, a.dk);
    a.k = heads_of(k);
    a.v = heads_of(v);
    a.B = x.size(0);
    a.H = m.heads;
    a.keys = k.size(2);
    a.key_padding = pad;
    a.kv_rows = rows.empty() ? nullptr : rows.data();
    Tensor heads = attention_one_query(a);
    return forward(m.out, Var(heads)).value();
  }
  // The general path: the rows' keys, values and mask gathered first.
  AttentionMask gathered = mask;
  if (!rows.empty() && mask.key_padding.defined()) gathered.key_padding = select_rows(mask.key_padding, rows);
  AttentionOptions o;
  o.weights = weights;
  Var heads = attention_heads(m, split_heads(q, m.heads), Var(rows.empty() ? k : select_rows(k, rows)),
                              Var(rows.empty() ? v : select_rows(v, rows)), gathered, o);
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
  if (!cache.history.empty()) cache.history = select_entries(cache.history, rows);
  if (!cache.first.empty()) cache.first = select_entries(cache.first, rows);
}

void add_rows(KVCache& cache, int64_t rows, int64_t n) {
  if (cache.history.empty()) {
    check(cache.length == 0, "add_rows: a cache of ", cache.length, " positions without rows");
    cache.history.resize(static_cast<size_t>(rows));
  }
  check(static_cast<int64_t>(cache.history.size()) == rows, "add_rows: ", rows, " rows for a cache of ",
        cache.history.size());
  if (cache.first.empty()) cache.first.assign(cache.history.size(), 0);
  cache.history.resize(static_cast<size_t>(rows + n));
  cache.first.resize(static_cast<size_t>(rows + n), cache.length);
}

void select_rows(std::vector<KVCache>& caches, const std::vector<int64_t>& rows) {
  for (KVCache& c : caches) select_rows(c, rows);
}

}  // namespace attn
