// How a decoder's inputs are chosen in training (seed 003's strategies) and, for the
// Transformer, scheduled sampling in two passes.
//
//   teacher forcing (ratio 1.0): the gold previous token y_{t-1} at every step;
//   free-running, "classic" (0.0): the model's own previous prediction (argmax);
//   scheduled sampling (Bengio et al. 2015): per token, gold with probability p, else the
//   prediction, with p decaying over training by a schedule.
//
// The RNN decoder runs step by step and feeds its own argmax of the previous step
// (models/rnn_seq2seq.cpp). The Transformer decodes every position at once, so it uses the
// standard two-pass approximation (Mihaylova and Martins 2019; Duckworth et al. 2019): a first
// pass without gradient gives the greedy prediction of every position from the gold prefix; the
// decoder input mixes gold tokens and those predictions; the second pass, with gradient, is the
// one trained.
#pragma once

#include <string>

#include "attn/models/transformer.h"
#include "attn/tensor/random.h"

namespace attn {

struct DecoderFeeding {
  float teacher_forcing = 1.0f;  // p: probability of feeding the gold token
  Rng* rng = nullptr;            // the coins; needed when 0 < p < 1
};

// p as a function of the optimizer step:
//   constant:         p = start
//   linear:           p = max(end, start - (start - end) * step / steps)
//   inverse_sigmoid:  p = end + (start - end) * k / (k + exp(step / k)),  k = steps
//   exponential:      p = end + (start - end) * exp(-step / steps)
struct TeacherForcingSchedule {
  std::string kind = "constant";
  double start = 1.0;
  double end = 0.0;
  double steps = 10000;
};
double teacher_forcing_at(const TeacherForcingSchedule& s, int64_t step);
void validate(const TeacherForcingSchedule& s);  // errors name the train.teacher_forcing* keys

// The Transformer's logits [B, T, V] with the decoder input mixed as above; feeding p >= 1 is
// plain teacher forcing (one pass).
Var transformer_logits_scheduled(const Transformer& m, const Tensor& src, const Tensor& tgt_in, const Context& ctx,
                                 const DecoderFeeding& feeding);

// The decoder input of the second pass: position t > 0 keeps the gold tgt_in[b, t] with
// probability p, else takes predicted[b, t-1] (the first pass's argmax at t-1); pad positions
// stay pad. predicted: i32 [B, T].
Tensor mix_decoder_input(const Tensor& tgt_in, const Tensor& predicted, int32_t pad_id, const DecoderFeeding& feeding);

}  // namespace attn
