#include "attn/decode/row_decoder.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "attn/decode/batch.h"
#include "attn/decode/rnn_step_decoder.h"
#include "attn/decode/step_decoder.h"
#include "attn/error.h"
#include "attn/nn/multi_head_attention.h"

namespace attn {

namespace {

// A copy of m (its weights shared) whose output layer holds only the rows `vocabulary`.
std::shared_ptr<Transformer> restricted(const Transformer& m, const std::vector<int32_t>& vocabulary) {
  auto sub = std::make_shared<Transformer>(m);
  const Tensor& W = m.generator.W.value();
  check(W.dtype() == DType::f32, "shortlist: the output layer is stored in ", dtype_name(W.dtype()),
        "; a shortlist needs its fp32 weights (use the fp32 model; --precision still applies)");
  std::vector<int64_t> rows;
  for (int32_t id : vocabulary) {
    check(id >= 0 && id < m.config.tgt_vocab, "shortlist: id ", id, " not in the target vocabulary of ", m.config.tgt_vocab);
    rows.push_back(id);
  }
  Tensor w = select_rows(W, rows).contiguous();  // [|vocabulary|, d_model]
  sub->generator.W = Var(w);
  if (m.generator.b.defined()) sub->generator.b = Var(select_rows(m.generator.b.value(), rows).contiguous());
  const Precision p = m.generator.form.precision;
  sub->generator.form = m.generator.form.frozen ? inference_form(w, p) : training_form(p);
  sub->config.tgt_vocab = static_cast<int64_t>(vocabulary.size());
  return sub;
}

// Log-probs over the vocabulary [rows, |vocabulary|] -> over every token [rows, V], -inf outside.
Tensor expand(const Tensor& sub, const std::vector<int32_t>& vocabulary, int64_t V) {
  const int64_t R = sub.size(0), S = sub.size(1);
  Tensor out = Tensor::full({R, V}, -std::numeric_limits<float>::infinity());
  const Tensor in = sub.contiguous();
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = 0; j < S; ++j) out.data<float>()[r * V + vocabulary[static_cast<size_t>(j)]] = in.data<float>()[r * S + j];
  return out;
}

}  // namespace

RowDecoder start_row_decoder(const Transformer& full, const std::vector<std::vector<int32_t>>& sources, bool cached,
                             const std::vector<int32_t>& vocabulary) {
  std::shared_ptr<const Transformer> sub;
  if (!vocabulary.empty()) sub = restricted(full, vocabulary);
  const Transformer& m = sub ? *sub : full;
  const TransformerConfig& c = m.config;
  NoGrad no_grad;
  Tensor src = pad_ids(sources, c.pad_id);  // [batch, src_len]
  Tensor src_pad = padding_mask(src, c.pad_id);
  Tensor memory = encode_real_positions(m, src);  // [batch, src_len, d_model]
  auto d = std::make_shared<StepDecoder>(start_step_decoder(m, memory, src_pad, cached));
  RowDecoder r;
  const int64_t V = full.config.tgt_vocab;
  if (sub) {
    r.step = [d, sub, vocabulary, V](const std::vector<int32_t>& t) { return expand(step(*d, t), vocabulary, V); };
  } else {
    r.step = [d](const std::vector<int32_t>& t) { return step(*d, t); };
  }
  r.select_rows = [d](const std::vector<int64_t>& rows, bool same) { select_rows(*d, rows, same); };
  r.bos_id = c.bos_id;
  r.eos_id = c.eos_id;
  r.tgt_vocab = V;
  r.max_len = c.max_len;
  return r;
}

RowDecoder start_row_decoder(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources, bool cached,
                             const std::vector<int32_t>& vocabulary) {
  if (const auto* transformer = std::get_if<Transformer>(&m.net))
    return start_row_decoder(*transformer, sources, cached, vocabulary);
  check(vocabulary.empty(), "shortlist: only a Transformer's output layer can be restricted, not the RNN's");
  const RnnSeq2Seq& rnn = std::get<RnnSeq2Seq>(m.net);
  const RnnConfig& c = rnn.config;
  // The RNN keeps no per-position cache: `cached` does not apply.
  auto d = std::make_shared<RnnStepDecoder>(start_rnn_step_decoder(rnn, pad_ids(sources, c.pad_id)));
  RowDecoder r;
  r.step = [d](const std::vector<int32_t>& t) { return step(*d, t); };
  r.select_rows = [d](const std::vector<int64_t>& rows, bool same) { select_rows(*d, rows, same); };
  r.bos_id = c.bos_id;
  r.eos_id = c.eos_id;
  r.tgt_vocab = c.tgt_vocab;
  r.max_len = c.max_len;
  return r;
}

RowDecoder ensemble_row_decoder(std::vector<RowDecoder> members, const std::vector<double>& weights) {
  check(!members.empty() && members.size() == weights.size(), "ensemble: ", members.size(), " models but ",
        weights.size(), " weights");
  RowDecoder r;
  r.bos_id = members.front().bos_id;
  r.eos_id = members.front().eos_id;
  r.tgt_vocab = members.front().tgt_vocab;
  r.max_len = members.front().max_len;
  for (size_t i = 1; i < members.size(); ++i) {
    const RowDecoder& m = members[i];
    check(m.tgt_vocab == r.tgt_vocab && m.bos_id == r.bos_id && m.eos_id == r.eos_id, "ensemble: model ", i + 1,
          " has a target vocabulary of ", m.tgt_vocab, " (bos ", m.bos_id, ", eos ", m.eos_id, "), model 1 of ",
          r.tgt_vocab, " (bos ", r.bos_id, ", eos ", r.eos_id, "): the models must share it");
    r.max_len = std::min(r.max_len, m.max_len);
  }
  auto shared = std::make_shared<std::vector<RowDecoder>>(std::move(members));
  std::vector<float> w(weights.begin(), weights.end());  // in the log-probs' precision, as PyTorch's w * tensor
  r.step = [shared, w](const std::vector<int32_t>& tokens) {
    // out = w_1 logp_1 + w_2 logp_2 + ..., summed in member order. A member of weight 0 is stepped
    // (its state stays in line) but adds nothing: 0 x -inf (a token outside a shortlist) is NaN.
    Tensor out;
    bool started = false;
    for (size_t m = 0; m < shared->size(); ++m) {
      Tensor lp = (*shared)[m].step(tokens).contiguous();  // [rows, V]
      if (w[m] == 0.0f) continue;
      const int64_t n = lp.numel();
      if (!started) {
        out = lp;
        float* o = out.data<float>();
        for (int64_t j = 0; j < n; ++j) o[j] *= w[m];
        started = true;
        continue;
      }
      const float* p = lp.data<float>();
      float* o = out.data<float>();
      for (int64_t j = 0; j < n; ++j) o[j] += w[m] * p[j];
    }
    check(started, "ensemble: every weight is 0");
    return out;
  };
  r.select_rows = [shared](const std::vector<int64_t>& rows, bool same) {
    for (RowDecoder& m : *shared) m.select_rows(rows, same);
  };
  return r;
}

}  // namespace attn
