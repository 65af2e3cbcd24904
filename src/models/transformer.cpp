#include "attn/models/transformer.h"

#include <cmath>
#include <cstring>

#include "attn/error.h"
#include "attn/nn/positional_encoding.h"
#include "attn/ops/add_layer_norm.h"

namespace attn {
namespace {

// sqrt(d_model), or 1 for a model whose embeddings are not scaled
float embed_scale(const Transformer& m) {
  return m.config.scale_embeddings ? std::sqrt(static_cast<float>(m.config.d_model)) : 1.0f;
}

// x = Embed(ids) sqrt(d_model) + PE[0:len]                     [batch, len, d_model]
Var embed(const Transformer& m, const Var& table, const Tensor& ids, int64_t first_position,
          const Context& ctx) {
  const int64_t len = ids.size(1);
  check(first_position + len <= m.config.max_len, "transformer: position ", first_position + len,
        " beyond max_len ", m.config.max_len);
  Var x = scale(embedding(table, ids), embed_scale(m));
  Var pos = m.config.positions == Positions::learned
                ? slice(m.pos_embed, 0, first_position, first_position + len)
                : Var(m.pe.slice(0, first_position, first_position + len));
  return apply_dropout(add(x, pos), ctx);
}

// The same for one token per row, row b at its own position positions[b] (rows that joined a
// running decoder at different steps): x_b = Embed(id_b) sqrt(d_model) + PE[positions[b]].
Var embed_rows(const Transformer& m, const std::vector<int32_t>& ids, const std::vector<int64_t>& positions) {
  const int64_t B = static_cast<int64_t>(ids.size()), d = m.config.d_model;
  for (int64_t p : positions)
    check(p < m.config.max_len, "transformer: position ", p + 1, " beyond max_len ", m.config.max_len);
  Var x = scale(embedding(m.tgt_embed, Tensor::from_ids(ids, {B, 1})), embed_scale(m));
  const Tensor& table = m.config.positions == Positions::learned ? m.pos_embed.value() : m.pe;
  return add(x, Var(select_rows(table, positions).reshape({B, 1, d})));
}

// LN(x) after a stack, or x for a model without that norm (config.final_norm)
Var stack_norm(const Transformer& m, const LayerNorm& norm, const Var& x) {
  return m.config.final_norm ? forward(norm, x) : x;
}

// x + Dropout(Sublayer(x)), with the LayerNorm after (post-LN) or before the sub-layer (pre-LN).
// f(h, c) is the sub-layer; c asks it for Dropout of its output, fused into its last linear layer.
template <typename F>
Var sublayer(const Transformer& m, const Var& x, const LayerNorm& norm, const Context& ctx, F f) {
  Context c = ctx;
  c.dropout_output = true;
  if (m.config.norm_first) return add(x, f(forward(norm, x), c));
  return add_layer_norm(x, f(x, c), norm.gamma, norm.beta);  // LN(x + ...) fused
}

}  // namespace

std::vector<std::pair<std::string, Var>> Transformer::parameters() const {
  // Tied keys (the target embedding when shared, the output weight when tied) are left out:
  // their Var is already listed under the key it is tied to, as in named_parameters().
  std::vector<std::pair<std::string, Var>> out;
  for (const auto& [name, v] : named) {
    if (config.share_embeddings && name == "tgt_embed.weight") continue;
    if (config.tie_output && name == "generator.weight") continue;
    out.emplace_back(name, v);
  }
  return out;
}

Tensor padding_mask(const Tensor& ids, int32_t pad_id) {
  Tensor c = ids.contiguous();
  Tensor mask = Tensor::empty(c.shape(), DType::i32);
  const int32_t* id = c.data<int32_t>();
  int32_t* out = mask.data<int32_t>();
  for (int64_t i = 0; i < c.numel(); ++i) out[i] = id[i] == pad_id;
  return mask;
}

namespace {

// The encoder's stack over x, with attend(layer's attention, h, c) its self-attention.
template <typename Attend>
Var encoder_stack(const Transformer& m, Var x, const Context& ctx, Attend attend) {
  for (const EncoderLayer& l : m.encoder) {
    // x = LN(x + MultiHead(x, x, x))
    x = sublayer(m, x, l.norm1, ctx, [&](const Var& h, const Context& c) { return attend(l.self_attn, h, c); });
    // x = LN(x + FFN(x))
    x = sublayer(m, x, l.norm2, ctx, [&](const Var& h, const Context& c) { return forward(l.ff, h, c); });
  }
  return stack_norm(m, m.encoder_norm, x);
}

// The slot for the next layer's weights in `stack`, or null when none are asked for.
Tensor* next_map(AttentionMaps* maps, std::vector<Tensor> AttentionMaps::*stack) {
  if (!maps) return nullptr;
  return &(maps->*stack).emplace_back();
}

}  // namespace

void prepare(Transformer& m, Precision p, Use use) {
  for (EncoderLayer& l : m.encoder) {
    prepare(l.self_attn, AttentionKind::self, p, use);
    prepare(l.ff, p, use);
  }
  for (DecoderLayer& l : m.decoder) {
    prepare(l.self_attn, AttentionKind::self, p, use);
    prepare(l.multihead_attn, AttentionKind::cross, p, use);
    prepare(l.ff, p, use);
  }
  prepare(m.generator, p, use);
}

Var encode(const Transformer& m, const Tensor& src, const Context& ctx, AttentionMaps* maps) {
  AttentionMask mask{padding_mask(src, m.config.pad_id), false};
  return encoder_stack(m, embed(m, m.src_embed, src, 0, ctx), ctx,
                       [&](const MultiHeadAttention& a, const Var& h, const Context& c) {
                         return self_attention(a, h, mask, c, next_map(maps, &AttentionMaps::encoder_self));
                       });
}

Tensor encode_real_positions(const Transformer& m, const Tensor& src) {
  NoGrad no_grad;
  Context ctx;  // inference: no dropout
  AttentionMask mask{padding_mask(src, m.config.pad_id), false};
  const RealRows rows = real_rows(mask.key_padding);
  if (rows.rows.empty() || static_cast<int64_t>(rows.rows.size()) == src.numel()) return encode(m, src, ctx).value();
  // the real positions of Embed(src) sqrt(d_model) + PE         [1, rows, d_model]
  Var x(remove_padding(embed(m, m.src_embed, src, 0, ctx).value(), rows));
  Var memory = encoder_stack(m, x, ctx, [&](const MultiHeadAttention& a, const Var& h, const Context&) {
    return Var(self_attention(a, h.value(), rows, mask));
  });
  return restore_padding(memory.value(), rows);  // [batch, src_len, d_model], 0 at the padding
}

Var decode(const Transformer& m, const Tensor& tgt_in, const Var& memory, const Tensor& src_pad,
           const Context& ctx, AttentionMaps* maps) {
  Var y = embed(m, m.tgt_embed, tgt_in, 0, ctx);
  AttentionMask causal{Tensor(), true}, cross{src_pad, false};
  for (const DecoderLayer& l : m.decoder) {
    // y = LN(y + MaskedMultiHead(y, y, y))
    y = sublayer(m, y, l.norm1, ctx, [&](const Var& h, const Context& c) {
      return self_attention(l.self_attn, h, causal, c, next_map(maps, &AttentionMaps::decoder_self));
    });
    // y = LN(y + MultiHead(y, memory, memory))
    y = sublayer(m, y, l.norm2, ctx,
                 [&](const Var& h, const Context& c) {
                   return cross_attention(l.multihead_attn, h, memory, cross, c, next_map(maps, &AttentionMaps::cross));
                 });
    // y = LN(y + FFN(y))
    y = sublayer(m, y, l.norm3, ctx, [&](const Var& h, const Context& c) { return forward(l.ff, h, c); });
  }
  // logits = LN(y) W_out^T + b                                 [batch, len, tgt_vocab]
  return forward(m.generator, stack_norm(m, m.decoder_norm, y));
}

DecoderState start_decoding(const Transformer& m, const Tensor& memory, const Tensor& src_pad, int64_t cache_positions) {
  DecoderState s;
  s.self.resize(m.decoder.size());
  if (cache_positions > 0)
    for (KVCache& c : s.self) c.first_capacity = std::min<int64_t>(m.config.max_len, cache_positions);
  s.src_pad = src_pad;
  for (int64_t r = 0; r < memory.size(0); ++r) s.memory_rows.push_back(r);
  // the keys and values of the real positions only: the padding's are never read
  const RealRows rows = real_rows(src_pad);
  const bool padded = static_cast<int64_t>(rows.rows.size()) < src_pad.numel() && !rows.rows.empty();
  for (const DecoderLayer& l : m.decoder) {
    Tensor k, v;
    project_memory(l.multihead_attn, memory, &k, &v, padded ? &rows : nullptr);
    s.memory_k.push_back(k);
    s.memory_v.push_back(v);
  }
  return s;
}

Tensor decode_step(const Transformer& m, DecoderState& s, const std::vector<int32_t>& tokens) {
  NoGrad no_grad;
  return log_softmax(Var(decode_step_logits(m, s, tokens))).value();
}

Tensor decode_step_logits(const Transformer& m, DecoderState& s, const std::vector<int32_t>& tokens) {
  const int64_t B = static_cast<int64_t>(tokens.size()), V = m.config.tgt_vocab;
  Tensor out = Tensor::empty({B, V});
  decode_step_logit_blocks(m, s, tokens, [&](int64_t first, const Tensor& logits) {
    std::memcpy(out.data<float>() + first * V, logits.data<float>(), sizeof(float) * static_cast<size_t>(logits.numel()));
  });
  return out;
}

void decode_step_logit_blocks(const Transformer& m, DecoderState& s, const std::vector<int32_t>& tokens,
                              const LogitBlock& visit) {
  NoGrad no_grad;
  const Tensor h = decode_step_hidden(m, s, tokens);  // [B, d_model]
  const int64_t B = h.size(0);
  // logits = LN(y) W_out^T + b, kLogitRows rows at a time
  for (int64_t r0 = 0; r0 < B; r0 += kLogitRows)
    visit(r0, forward(m.generator, Var(h.slice(0, r0, std::min(B, r0 + kLogitRows)))).value().contiguous());
}

Tensor decode_step_hidden(const Transformer& m, DecoderState& s, const std::vector<int32_t>& tokens) {
  NoGrad no_grad;
  Context ctx;  // inference: no dropout
  int64_t B = static_cast<int64_t>(tokens.size());
  // Rows that joined at different steps (add_sentences) are each at their own position: the
  // number of keys their self-attention cache holds.
  const bool joined = !s.self.empty() && !s.self.front().first.empty();
  std::vector<int64_t> positions;
  if (joined)
    for (const auto& h : s.self.front().history) positions.push_back(static_cast<int64_t>(h.size()));
  check(!joined || static_cast<int64_t>(positions.size()) == B, "decode_step: ", B, " tokens for ", positions.size(),
        " rows");
  Var y = joined ? embed_rows(m, tokens, positions)
                 : embed(m, m.tgt_embed, Tensor::from_ids(tokens, {B, 1}), s.position, ctx);  // [B, 1, d]
  AttentionMask cross{s.src_pad, false};
  for (size_t i = 0; i < m.decoder.size(); ++i) {
    const DecoderLayer& l = m.decoder[i];
    // inference: the sub-layers' Context (no dropout) has nothing for the cached steps
    y = sublayer(m, y, l.norm1, ctx, [&](const Var& h, const Context&) {
      return Var(self_attention_step(l.self_attn, h.value(), s.self[i]));
    });
    y = sublayer(m, y, l.norm2, ctx, [&](const Var& h, const Context&) {
      return Var(cross_attention_cached(l.multihead_attn, h.value(), s.memory_k[i], s.memory_v[i], cross,
                                         s.memory_rows));
    });
    y = sublayer(m, y, l.norm3, ctx, [&](const Var& h, const Context& c) { return forward(l.ff, h, c); });
  }
  s.position += 1;
  return reshape(stack_norm(m, m.decoder_norm, y), {B, m.config.d_model}).value();
}

void select_rows(DecoderState& s, const std::vector<int64_t>& rows) {
  select_rows(s.self, rows);
  s.memory_rows = select_entries(s.memory_rows, rows);
}

}  // namespace attn
