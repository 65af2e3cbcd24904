#include "attn/decode/step_decoder.h"

#include "attn/decode/batch.h"
#include "attn/error.h"
#include "attn/nn/multi_head_attention.h"

namespace attn {

StepDecoder start_step_decoder(const Transformer& m, const Tensor& memory, const Tensor& src_pad,
                               bool cached, int64_t cache_positions) {
  StepDecoder d;
  d.model = &m;
  d.cached = cached;
  if (cached) {
    d.state = start_decoding(m, memory, src_pad, cache_positions);
  } else {
    d.memory = memory;
    d.src_pad = src_pad;
    d.prefixes.resize(static_cast<size_t>(memory.size(0)));
  }
  return d;
}

Tensor step(StepDecoder& d, const std::vector<int32_t>& tokens) {
  if (d.cached) return decode_step(*d.model, d.state, tokens);
  check(tokens.size() == d.prefixes.size(), "step: ", tokens.size(), " tokens for ", d.prefixes.size(), " rows");
  for (size_t r = 0; r < tokens.size(); ++r) d.prefixes[r].push_back(tokens[r]);
  NoGrad no_grad;
  Context ctx;  // inference: no dropout
  const Transformer& m = *d.model;
  Tensor tgt_in = pad_ids(d.prefixes, m.config.pad_id);  // [rows, t] (all rows the same length)
  int64_t R = tgt_in.size(0), T = tgt_in.size(1), V = m.config.tgt_vocab;
  Tensor logits = decode(m, tgt_in, Var(d.memory), d.src_pad, ctx).value();  // [rows, t, V]
  Tensor last = logits.select(1, T - 1).contiguous();                         // [rows, V]
  Tensor logp = Tensor::empty({R, V});
  log_softmax_rows(last.data<float>(), logp.data<float>(), R, V);
  return logp;
}

void select_rows(StepDecoder& d, const std::vector<int64_t>& rows, bool same_sources) {
  if (d.cached && same_sources) {
    select_rows(d.state.self, rows);
    return;
  }
  if (d.cached) {
    select_rows(d.state, rows);
    return;
  }
  if (!same_sources) {
    d.memory = select_rows(d.memory, rows);
    d.src_pad = select_rows(d.src_pad, rows);
  }
  std::vector<std::vector<int32_t>> kept;
  kept.reserve(rows.size());
  for (int64_t r : rows) kept.push_back(d.prefixes[static_cast<size_t>(r)]);
  d.prefixes = std::move(kept);
}

}  // namespace attn
