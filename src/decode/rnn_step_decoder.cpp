#include "attn/decode/rnn_step_decoder.h"

#include "attn/error.h"
#include "attn/ops/softmax.h"

namespace attn {

RnnStepDecoder start_rnn_step_decoder(const RnnSeq2Seq& m, const Tensor& src) {
  NoGrad no_grad;
  RnnStepDecoder d;
  d.model = &m;
  d.memory = rnn_encode(m, src, Context{});
  d.state = d.memory.decoder_state;
  d.memory.decoder_state = RnnState{};  // the live state is d.state
  return d;
}

Tensor step(RnnStepDecoder& d, const std::vector<int32_t>& tokens) {
  NoGrad no_grad;
  const int64_t R = static_cast<int64_t>(tokens.size());
  check(R == d.state.h.front().size(0), "rnn step: ", R, " tokens for ", d.state.h.front().size(0), " rows");
  Tensor ids = Tensor::from_ids(tokens, {R});
  Tensor logits = rnn_decode_step(*d.model, d.memory, d.state, ids, Context{}).value().contiguous();  // [R, V]
  const int64_t V = logits.size(1);
  Tensor logp = Tensor::empty({R, V});
  log_softmax_rows(logits.data<float>(), logp.data<float>(), R, V);
  return logp;
}

void select_rows(RnnStepDecoder& d, const std::vector<int64_t>& rows, bool same_sources) {
  select_rows(d.state, rows);
  if (!same_sources) select_rows(d.memory, rows);
}

}  // namespace attn
