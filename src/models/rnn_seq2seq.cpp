// The RNN encoder-decoder's forward pass (models/rnn_seq2seq.h): the encoder over the whole
// source, then the decoder one step at a time, every op on the tape when training.
#include "attn/models/rnn_seq2seq.h"

#include "attn/error.h"
#include "attn/models/transformer.h"
#include "attn/nn/multi_head_attention.h"

namespace attn {
namespace {

// Row lengths of a right-padded batch: i32 [B].
Tensor source_lengths(const Tensor& pad) {
  const int64_t B = pad.size(0), S = pad.size(1);
  Tensor lengths = Tensor::empty({B}, DType::i32);
  for (int64_t b = 0; b < B; ++b) {
    int32_t n = 0;
    for (int64_t i = 0; i < S; ++i) n += pad.data<int32_t>()[b * S + i] == 0;
    check(n > 0, "rnn encoder: source row ", b, " is empty (only padding)");
    lengths.data<int32_t>()[b] = n;
  }
  return lengths;
}

// s_0 of decoder layer l from encoder layer l's final states.
RnnState initial_decoder_state(const RnnSeq2Seq& m, const RnnState& final) {
  const int64_t dirs = m.encoder.directions();
  const bool lstm = m.config.cell == RnnCell::lstm, bridged = m.encoder_out() != m.config.d_model;
  auto both = [&](const std::vector<Var>& s, int64_t l) {
    // [h_fwd; h_bwd]                                           [B, enc_out]
    return dirs == 1 ? s[static_cast<size_t>(l)] : concat({s[static_cast<size_t>(2 * l)], s[static_cast<size_t>(2 * l + 1)]}, 1);
  };
  RnnState s0;
  for (int64_t l = 0; l < m.config.decoder_layers; ++l) {
    Var h = both(final.h, l);
    // s_0 = tanh(W_h h + b) when the sizes differ               [B, d_model]
    s0.h.push_back(bridged ? tanh(forward(m.bridge_h, h)) : h);
    if (lstm) {
      Var c = both(final.c, l);
      s0.c.push_back(bridged ? forward(m.bridge_c, c) : c);  // c_0 = W_c c + b
    }
  }
  return s0;
}

// One decoder step up to the attentional output o_t [B, d_model] (the generator is applied by the
// callers, once for all steps in training).
Var decoder_output(const RnnSeq2Seq& m, const RnnMemory& memory, RnnState& state, const Tensor& tokens,
                   const Context& ctx, Tensor* weights) {
  const int64_t D = m.config.d_model, enc = m.encoder_out();
  const Var& s_prev = state.h.back();  // s_{t-1}, the top layer        [B, d_model]
  const int64_t B = s_prev.size(0);
  // e_{t,i} = score(s_{t-1}, h_i); alpha_t = softmax(e_t); c_t = sum_i alpha_{t,i} h_i  [B, enc_out]
  Var context = reshape(attend(m.attention, reshape(s_prev, {B, 1, D}), memory.keys, memory.states, memory.pad,
                               weights),
                        {B, enc});
  Var y = apply_dropout(embedding(m.tgt_embed, tokens), ctx);  // Embed(y_{t-1})  [B, d_model]
  // s_t = RNN([Embed(y_{t-1}); c_t], s_{t-1})                   [B, d_model]
  Var s = step(m.decoder, m.config.input_feeding ? concat({y, context}, 1) : y, state, ctx);
  // o_t = tanh(W_o [s_t; c_t] + b_o)                            [B, d_model]
  return apply_dropout(tanh(forward(m.readout, concat({s, context}, 1))), ctx);
}

// argmax over each row of logits [B, V] (ties: the lower id, as torch.argmax).
Tensor row_argmax(const Tensor& logits) {
  Tensor l = logits.contiguous();
  const int64_t B = l.size(0), V = l.size(1);
  Tensor ids = Tensor::empty({B}, DType::i32);
  for (int64_t b = 0; b < B; ++b) {
    const float* row = l.data<float>() + b * V;
    int32_t best = 0;
    for (int64_t v = 1; v < V; ++v)
      if (row[v] > row[best]) best = static_cast<int32_t>(v);
    ids.data<int32_t>()[b] = best;
  }
  return ids;
}

// The decoder's input at step t: the gold y_{t-1}, or for each row whose coin says so, the model's
// argmax at step t-1 (from o_{t-1}, without gradient).
Tensor step_input(const RnnSeq2Seq& m, const Tensor& tgt_in, int64_t t, const Var& o_prev, const DecoderFeeding& f) {
  Tensor gold = tgt_in.select(1, t).clone();  // [B], a copy: rows may be replaced below
  if (t == 0 || f.teacher_forcing >= 1.0f) return gold;
  Tensor predicted;
  {
    NoGrad no_grad;
    predicted = row_argmax(forward(m.generator, Var(o_prev.value())).value());
  }
  if (f.teacher_forcing <= 0.0f) return predicted;
  check(f.rng != nullptr, "rnn decoder: scheduled sampling needs a random stream");
  for (int64_t b = 0; b < gold.numel(); ++b)
    if (f.rng->uniform() >= f.teacher_forcing) gold.data<int32_t>()[b] = predicted.data<int32_t>()[b];
  return gold;
}

}  // namespace

void prepare(RnnSeq2Seq& m, Precision p, Use use) {
  for (Linear* l : {&m.bridge_h, &m.bridge_c, &m.readout, &m.generator}) prepare(*l, p, use);
  prepare(m.attention, p, use);  // the recurrent cells' own products stay f32 (ops/rnn.h)
}

RnnMemory rnn_encode(const RnnSeq2Seq& m, const Tensor& src, const Context& ctx) {
  if (!(src.dim() == 2 && src.dtype() == DType::i32))
    fail("rnn encoder: source must be i32 [batch, len], got ",
         shape_str(src.shape()));
  const int64_t B = src.size(0), S = src.size(1);
  Tensor pad = padding_mask(src, m.config.pad_id);  // [B, S]
  Var x = apply_dropout(embedding(m.src_embed, src), ctx);  // [B, S, d_model]
  RnnState final;
  RnnMemory mem;
  // H = (Bi)RNN(Embed(src))                                   [B, S, enc_out]
  mem.states = forward(m.encoder, x, source_lengths(pad), ctx, nullptr, &final);
  mem.keys = score_keys(m.attention, mem.states);
  mem.pad = pad.reshape({B, 1, S});
  mem.decoder_state = initial_decoder_state(m, final);
  return mem;
}

Var rnn_decode_step(const RnnSeq2Seq& m, const RnnMemory& memory, RnnState& state, const Tensor& tokens,
                    const Context& ctx, Tensor* weights) {
  // logits_t = o_t W_out^T + b_out                             [B, V]
  return forward(m.generator, decoder_output(m, memory, state, tokens, ctx, weights));
}

Var rnn_logits(const RnnSeq2Seq& m, const Tensor& src, const Tensor& tgt_in, const Context& ctx,
               const DecoderFeeding& feeding) {
  if (!(tgt_in.dim() == 2 && tgt_in.size(0) == src.size(0)))
    fail("rnn decoder: target ", shape_str(tgt_in.shape()),
         " does not match source ", shape_str(src.shape()));
  RnnMemory memory = rnn_encode(m, src, ctx);
  RnnState state = memory.decoder_state;
  const int64_t B = tgt_in.size(0), T = tgt_in.size(1), D = m.config.d_model;
  std::vector<Var> outputs;
  for (int64_t t = 0; t < T; ++t) {
    Tensor tokens = step_input(m, tgt_in, t, t > 0 ? outputs.back() : Var(), feeding);
    outputs.push_back(decoder_output(m, memory, state, tokens, ctx, nullptr));
  }
  for (Var& o : outputs) o = reshape(o, {B, 1, D});
  // The generator once over every step                        [B, T, V]
  return forward(m.generator, concat(outputs, 1));
}

void select_rows(RnnState& state, const std::vector<int64_t>& rows) {
  for (Var& h : state.h) h = Var(select_rows(h.value(), rows));
  for (Var& c : state.c) c = Var(select_rows(c.value(), rows));
}

void select_rows(RnnMemory& memory, const std::vector<int64_t>& rows) {
  memory.states = Var(select_rows(memory.states.value(), rows));
  memory.keys = Var(select_rows(memory.keys.value(), rows));
  memory.pad = select_rows(memory.pad, rows);
  select_rows(memory.decoder_state, rows);
}

}  // namespace attn
