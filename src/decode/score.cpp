#include "attn/decode/score.h"

#include "attn/decode/batch.h"
#include "attn/error.h"

namespace attn {

namespace {

// log P(y | x) for each (source, target): `logits_of` maps (src [B, S], tgt_in [B, T]) to the
// teacher-forced logits [B, T, V].
template <typename Logits>
std::vector<double> score_with(const Seq2SeqCommon& c, const std::vector<std::vector<int32_t>>& sources,
                               const std::vector<std::vector<int32_t>>& targets, const Logits& logits_of) {
  check(sources.size() == targets.size(), "score: ", sources.size(), " sources but ", targets.size(), " targets");
  if (sources.empty()) return {};
  // Decoder input bos y_1 .. y_n, gold output y_1 .. y_n eos.
  std::vector<std::vector<int32_t>> tgt_in, gold;
  for (const auto& y : targets) {
    tgt_in.push_back({c.bos_id});
    tgt_in.back().insert(tgt_in.back().end(), y.begin(), y.end());
    gold.push_back(y);
    gold.back().push_back(c.eos_id);
  }
  NoGrad no_grad;
  Tensor src = pad_ids(sources, c.pad_id);  // [batch, src_len]
  Tensor in = pad_ids(tgt_in, c.pad_id);    // [batch, tgt_len]
  // Padding never reaches a row's earlier (real) positions: the decoders are causal.
  Tensor logits = logits_of(src, in).contiguous();  // [batch, tgt_len, V]
  int64_t B = in.size(0), T = in.size(1), V = c.tgt_vocab;
  Tensor logp = Tensor::empty({B, T, V});
  log_softmax_rows(logits.data<float>(), logp.data<float>(), B * T, V);
  std::vector<double> totals(static_cast<size_t>(B), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<int32_t>& g = gold[static_cast<size_t>(b)];
    for (size_t t = 0; t < g.size(); ++t)  // real positions only
      totals[static_cast<size_t>(b)] += logp.data<float>()[(b * T + static_cast<int64_t>(t)) * V + g[t]];
  }
  return totals;
}

}  // namespace

std::vector<double> score_translations(const Transformer& m,
                                       const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets) {
  return score_with(common_of(m.config), sources, targets, [&](const Tensor& src, const Tensor& in) {
    Context ctx;  // inference: no dropout
    Var memory = encode(m, src, ctx);
    return decode(m, in, memory, padding_mask(src, m.config.pad_id), ctx).value();
  });
}

std::vector<double> score_translations(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets) {
  return score_with(m.common(), sources, targets, [&](const Tensor& src, const Tensor& in) {
    return seq2seq_logits(m, src, in, Context{}).value();
  });
}

}  // namespace attn
