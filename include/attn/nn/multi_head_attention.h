// Multi-head attention (§3.2.2):
//   MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)
// The h projections of width d_k = d_model / h are held as one packed matrix, PyTorch's in_proj
// layout [W^Q; W^K; W^V] of shape [3 d_model, d_model], so that self-attention projects Q, K and V
// in one GEMM.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/error.h"
#include "attn/nn/attention_score.h"
#include "attn/nn/layers.h"
#include "attn/ops/attention.h"
#include "attn/ops/padding.h"

namespace attn {

// How Q, K and V [batch, len, d_model] are cut into heads: standard (each position's d_model split
// into h runs of d_k, PyTorch's nn.MultiheadAttention), or seed (seed 002's classifier:
// Q.view(batch * h, -1, d_k), each head a run of len * d_k of the flat memory, positions mixed).
enum class HeadSplit { standard, seed };

struct MultiHeadAttention {
  int64_t heads = 8;
  Var W_in;  // [3 d_model, d_model]: W^Q, W^K, W^V stacked (in_proj_weight)
  Var b_in;  // [3 d_model] (in_proj_bias)
  Linear out;  // W^O and its bias (out_proj)
  AttentionScore score;  // scaled_dot (default): the fused path; others: nn/attention_score.h, per head
  HeadSplit split = HeadSplit::standard;
  // How the in-projection's products run (ops/weight_form.h): W_in whole for self-attention;
  // its rows W^Q and [W^K; W^V] apart for encoder-decoder attention.
  WeightForm in_form, q_form, kv_form;
};

// Which attention a MultiHeadAttention computes: its inference forms are made for that one.
enum class AttentionKind { self, cross };

// Fixes how m's products run: precision p, for training or (frozen weights) inference.
void prepare(MultiHeadAttention& m, AttentionKind kind, Precision p, Use use);

// Keys and values of the positions decoded so far (incremental decoding), by slot: k, v [slots, h,
// capacity, d_k], buffer positions [0, length) filled. Every step writes each row's newest key at
// buffer position `length` of slot r (its row), so a (slot, position) is written once and no row's
// history is ever overwritten. Row r's own position j is in slot history[r][j], at buffer position
// first[r] + j: rows that joined at different steps (continuous batching, add_rows) hold histories
// of different lengths. select_rows (a beam's reordering) moves histories, never keys and values.
struct KVCache {
  Tensor k, v;
  int64_t length = 0;
  std::vector<std::vector<int32_t>> history;
  std::vector<int64_t> first;  // empty: every row started at buffer position 0
  // Positions of the first buffer, grown by half when full. Growing copies the buffer and a new
  // one is fresh memory, so a decoder that knows about how long its outputs run sets this.
  int64_t first_capacity = 16;
};

// Adds n rows after the cache's `rows` rows, starting at the next step (their histories empty).
void add_rows(KVCache& cache, int64_t rows, int64_t n);

// MultiHead(x, x, x): x [batch, len, d_model] -> [batch, len, d_model].
Var self_attention(const MultiHeadAttention& m, const Var& x, const AttentionMask& mask,
                   const Context& ctx, Tensor* weights = nullptr);

// Inference: MultiHead(x, x, x) over the real positions of a padded batch only. x [1, rows, d]
// holds them (include/attn/ops/padding.h); mask is the batch's padding. Returns [1, rows, d].
Tensor self_attention(const MultiHeadAttention& m, const Tensor& x, const RealRows& rows, const AttentionMask& mask);

// MultiHead(x, memory, memory): queries from x [batch, tq, d], keys and values from memory
// [batch, tk, d] (the encoder-decoder attention).
Var cross_attention(const MultiHeadAttention& m, const Var& x, const Var& memory,
                    const AttentionMask& mask, const Context& ctx, Tensor* weights = nullptr);

// Inference only. The memory's keys and values, computed once per sentence:
// [batch, heads, tk, d_k] each. With rows (the real positions of memory), those only: 0 elsewhere.
void project_memory(const MultiHeadAttention& m, const Tensor& memory, Tensor* k, Tensor* v,
                    const RealRows* rows = nullptr);
// One decoding step of self-attention: x [batch, 1, d]; appends this position's key and value to
// the cache, attends over every cached position.
Tensor self_attention_step(const MultiHeadAttention& m, const Tensor& x, KVCache& cache,
                           Tensor* weights = nullptr);
// Queries x [batch, t, d] over projected memory keys/values.
Tensor cross_attention_cached(const MultiHeadAttention& m, const Tensor& x, const Tensor& k,
                              const Tensor& v, const AttentionMask& mask, Tensor* weights = nullptr);
// The same with query row r reading row rows[r] of k, v and the key padding mask (the beams of
// one sentence share its memory rows instead of copies); rows empty: row r.
Tensor cross_attention_cached(const MultiHeadAttention& m, const Tensor& x, const Tensor& k,
                              const Tensor& v, const AttentionMask& mask, const std::vector<int64_t>& rows,
                              Tensor* weights = nullptr);

// Keeps batch rows `rows` of a cache (beam search reordering and finished sentences leaving).
void select_rows(KVCache& cache, const std::vector<int64_t>& rows);
// The same for every cache of a decoder (each buffer on its own thread).
void select_rows(std::vector<KVCache>& caches, const std::vector<int64_t>& rows);
Tensor select_rows(const Tensor& t, const std::vector<int64_t>& rows);

// Entries rows[0], rows[1], ... of per-row state (a beam's reordering), each index checked.
template <typename T>
std::vector<T> select_entries(const std::vector<T>& entries, const std::vector<int64_t>& rows) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (int64_t r : rows) {
    check(r >= 0 && r < static_cast<int64_t>(entries.size()), "select_rows: row ", r, " of ", entries.size());
    out.push_back(entries[static_cast<size_t>(r)]);
  }
  return out;
}

}  // namespace attn
