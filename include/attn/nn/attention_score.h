// Attention score functions (seed 004), one choice wherever attention is computed:
//   scaled_dot  e = q^T k / sqrt(d_k)          (§3.2.1, the Transformer's; its fused path stays in
//                                                ops/attention.h)
//   dot         e = q^T k                       (Luong et al. 2015, "dot")
//   bilinear    e = q^T W k                     (Luong's "general"; W [d_q, d_k])
//   additive    e = v_a^T tanh(W_a q + U_a k)   (Bahdanau et al. 2015; W_a [A, d_q], U_a [A, d_k] + b)
// then alpha = softmax(e) over the keys that are not padding, and the output sum_i alpha_i v_i.
//
// The seq2seq RNN of seed 003 uses one query per sentence and step (s_{t-1} against the encoder
// states h_i); multi-head attention uses it per head (heads folded into the batch) when its score is
// not scaled_dot. Everything is composed of differentiable ops, so the gradients come from the tape.
#pragma once

#include <string>

#include "attn/nn/layers.h"
#include "attn/nn/score_kind.h"
#include "attn/ops/attention.h"

namespace attn {


struct AttentionScore {
  ScoreKind kind = ScoreKind::scaled_dot;
  Var W;     // bilinear: W [d_q, d_k];  additive: W_a [A, d_q] (no bias)
  Linear U;  // additive: U_a [A, d_k] and its bias [A]
  Var v;     // additive: v_a [1, A]
  Precision precision = Precision::fp32;  // of the score's products (bf16 in bf16 training)
};

// Fixes the precision of the score's products, for training or inference (a model's prepare(),
// models/seq2seq.h and models/classifier.h).
void prepare(AttentionScore& s, Precision p, Use use);

// The keys as the score reads them, computed once per source sentence: U_a k + b [B, S, A] for
// additive, k itself otherwise. k: [B, S, d_k].
Var score_keys(const AttentionScore& s, const Var& k);

// Scores e [B, Tq, S] of queries q [B, Tq, d_q] against keys from score_keys().
Var attention_scores(const AttentionScore& s, const Var& q, const Var& keys);

// alpha = softmax(e) with masked positions excluded, then alpha V.
//   q [B, Tq, d_q], keys from score_keys, values [B, S, d_v], mask: i32/f32 broadcasting to
//   [B, Tq, S], nonzero = not attended (may be undefined).
// Returns the output [B, Tq, d_v]; `weights` (if given) receives alpha [B, Tq, S].
Var attend(const AttentionScore& s, const Var& q, const Var& keys, const Var& values, const Tensor& mask,
           Tensor* weights = nullptr);

// Multi-head attention with this score, unfused (the reference path for score != scaled_dot):
// q [B, h, Tq, d_k], k and v [B, h, S, d_k] -> [B, h, Tq, d_k], masks and dropout as
// scaled_dot_product_attention (options.scale is ignored).
Var multi_head_attend(const AttentionScore& s, const Var& q, const Var& k, const Var& v,
                      const AttentionMask& mask, const AttentionOptions& options);

}  // namespace attn
