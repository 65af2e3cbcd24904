#include "attn/models/scheduled_sampling.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"

namespace attn {

double teacher_forcing_at(const TeacherForcingSchedule& s, int64_t step) {
  const double i = static_cast<double>(step), span = s.start - s.end;
  if (s.kind == "constant") return s.start;
  if (s.kind == "linear") return std::max(s.end, s.start - span * i / s.steps);
  if (s.kind == "inverse_sigmoid") return s.end + span * s.steps / (s.steps + std::exp(std::min(i / s.steps, 700.0)));
  if (s.kind == "exponential") return s.end + span * std::exp(-i / s.steps);
  fail("train.teacher_forcing_schedule must be constant, linear, inverse_sigmoid or exponential, got '", s.kind, "'");
}

void validate(const TeacherForcingSchedule& s) {
  check(s.start >= 0.0 && s.start <= 1.0, "train.teacher_forcing must be in [0, 1], got ", s.start);
  check(s.end >= 0.0 && s.end <= 1.0, "train.teacher_forcing_min must be in [0, 1], got ", s.end);
  check(s.steps > 0.0, "train.teacher_forcing_steps must be positive, got ", s.steps);
  teacher_forcing_at(s, 0);  // checks the kind
}

Tensor mix_decoder_input(const Tensor& tgt_in, const Tensor& predicted, int32_t pad_id, const DecoderFeeding& f) {
  Tensor gold = tgt_in.contiguous(), pred = predicted.contiguous();
  if (!(gold.shape() == pred.shape()))
    fail("scheduled sampling: predictions ", shape_str(pred.shape()),
         " do not match the decoder input ", shape_str(gold.shape()));
  Tensor mixed = gold.clone();
  if (f.teacher_forcing >= 1.0f) return mixed;
  check(f.teacher_forcing <= 0.0f || f.rng != nullptr, "scheduled sampling needs a random stream");
  const int64_t B = gold.size(0), T = gold.size(1);
  const int32_t* g = gold.data<int32_t>();
  const int32_t* p = pred.data<int32_t>();
  int32_t* out = mixed.data<int32_t>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 1; t < T; ++t) {
      if (g[b * T + t] == pad_id) continue;
      bool sample = f.teacher_forcing <= 0.0f || f.rng->uniform() >= f.teacher_forcing;
      if (sample) out[b * T + t] = p[b * T + t - 1];
    }
  return mixed;
}

Var transformer_logits_scheduled(const Transformer& m, const Tensor& src, const Tensor& tgt_in, const Context& ctx,
                                 const DecoderFeeding& feeding) {
  Tensor src_pad = padding_mask(src, m.config.pad_id);
  Var memory = encode(m, src, ctx);
  if (feeding.teacher_forcing >= 1.0f) return decode(m, tgt_in, memory, src_pad, ctx);
  // Pass 1, no gradient and no dropout: the greedy prediction after each gold prefix.
  Tensor predicted;
  {
    NoGrad no_grad;
    Context eval;
    Tensor logits = decode(m, tgt_in, Var(memory.value()), src_pad, eval).value().contiguous();  // [B, T, V]
    const int64_t rows = logits.size(0) * logits.size(1), V = logits.size(2);
    predicted = Tensor::empty({logits.size(0), logits.size(1)}, DType::i32);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = logits.data<float>() + r * V;
      predicted.data<int32_t>()[r] = static_cast<int32_t>(std::max_element(row, row + V) - row);
    }
  }
  // Pass 2, with gradient, on the mixed input.
  return decode(m, mix_decoder_input(tgt_in, predicted, m.config.pad_id, feeding), memory, src_pad, ctx);
}

}  // namespace attn
