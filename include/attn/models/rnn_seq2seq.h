// The RNN encoder-decoder with attention of seed 003 (Bahdanau et al. 2015; config.json
// "model": "rnn"; its config is models/rnn_config.h), sharing the Transformer's vocabulary, model
// directory, training, search and scoring (models/seq2seq.h):
//
//   encoder:  H = [h_1 .. h_S] = (Bi)LSTM/GRU(Embed(src))       padding never read (packed)
//   s_0:      the encoder's last state, per layer [h_fwd; h_bwd]; through
//             s_0 = tanh(W_h s + b), c_0 = W_c c + b when its size differs from d_model
//   step t:   e_{t,i} = score(s_{t-1}, h_i)                      (nn/attention_score.h)
//             alpha_t = softmax(e_t) over non-pad i;   c_t = sum_i alpha_{t,i} h_i
//             s_t = LSTM/GRU([Embed(y_{t-1}); c_t], s_{t-1})     (input feeding of the context)
//             o_t = tanh(W_o [s_t; c_t] + b_o);   logits_t = o_t W_out^T + b_out  (W_out tied: Embed)
//
// Parameter names are tests/rnn/torch_rnn.py's state_dict keys (encoder.weight_ih_l0_reverse, ...).
// Sizes: embeddings and the decoder are d_model wide; each encoder direction has encoder_hidden
// units (0: d_model / directions).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attn/models/scheduled_sampling.h"
#include "attn/models/rnn_config.h"
#include "attn/nn/attention_score.h"
#include "attn/nn/rnn.h"
#include "attn/tensor/random.h"

namespace attn {

struct RnnSeq2Seq {
  RnnConfig config;
  Var src_embed, tgt_embed;  // [vocab, d_model]; one Var when shared
  Rnn encoder;               // directions * encoder_hidden outputs
  Linear bridge_h, bridge_c; // [d_model, enc_out], when enc_out != d_model (bridge_c: LSTM only)
  Rnn decoder;               // unidirectional, d_model units
  AttentionScore attention;  // query s_{t-1} [d_model], keys h_i [enc_out]
  Linear readout;            // W_o [d_model, d_model + enc_out]
  Linear generator;          // W_out [tgt_vocab, d_model] (tgt_embed when tied), b [tgt_vocab]

  std::map<std::string, Var> named;  // by checkpoint key; tied keys map to the same Var
  std::vector<std::pair<std::string, Var>> parameters() const;  // distinct, in a fixed order
  int64_t encoder_out() const;       // directions * encoder_hidden
};

// A new model: weight matrices Xavier-uniform, RNN weights U(-1/sqrt(H), 1/sqrt(H)) (PyTorch's),
// embeddings N(0, d_model^-1/2), biases 0.
RnnSeq2Seq make_rnn_seq2seq(const RnnConfig& config, uint64_t seed);
// Around loaded tensors (by key); missing, misshapen or extra tensors are errors naming them.
// Tensors the map alone holds become the parameters without a copy (load_named_tensors).
RnnSeq2Seq rnn_seq2seq_from_tensors(const RnnConfig& config, std::map<std::string, Tensor> tensors,
                                    const std::string& source);

// The encoder's side of a batch: states, attention keys, padding, the decoder's first state.
// Fixes how m's linear layers and attention products run: precision p, for training or (frozen
// weights) inference.
void prepare(RnnSeq2Seq& m, Precision p, Use use);

struct RnnMemory {
  Var states;  // H [B, S, enc_out]
  Var keys;    // score_keys(H)
  Tensor pad;  // i32 [B, 1, S], 1 = padding
  RnnState decoder_state;  // s_0 per decoder layer
};
RnnMemory rnn_encode(const RnnSeq2Seq& m, const Tensor& src, const Context& ctx);

// One decoder step: tokens y_{t-1} [B] (i32), the state s_{t-1} updated to s_t -> logits [B, V].
// `weights` (if given) receives alpha_t [B, 1, S]. rows of `memory` and `state` must agree.
Var rnn_decode_step(const RnnSeq2Seq& m, const RnnMemory& memory, RnnState& state, const Tensor& tokens,
                    const Context& ctx, Tensor* weights = nullptr);

// tgt_in [B, T] ids (bos first) -> logits [B, T, V], the decoder run step by step. The input of
// step t > 0 is the gold tgt_in[:, t] or, per token with probability 1 - feeding.teacher_forcing,
// the model's own argmax at step t-1 (models/scheduled_sampling.h).
Var rnn_logits(const RnnSeq2Seq& m, const Tensor& src, const Tensor& tgt_in, const Context& ctx,
               const DecoderFeeding& feeding = {});

// Keeps rows `rows` of a memory and of a decoder state (beam search).
void select_rows(RnnMemory& memory, const std::vector<int64_t>& rows);
void select_rows(RnnState& state, const std::vector<int64_t>& rows);

}  // namespace attn
