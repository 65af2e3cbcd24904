#include "attn/decode/row_decoder.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "attn/decode/batch.h"
#include "attn/decode/rnn_step_decoder.h"
#include "attn/decode/step_decoder.h"
#include "attn/error.h"
#include "attn/nn/multi_head_attention.h"
#include "attn/ops/matmul.h"
#include "attn/ops/softmax.h"
#include "attn/parallel.h"

namespace attn {

namespace {

// A sentence's own output layer: the rows of W_out (and b) of the tokens it may output.
Linear listed_output(const Transformer& m, const std::vector<int32_t>& ids) {
  const Tensor& W = m.generator.W.value();
  check(W.dtype() == DType::f32, "shortlist: the output layer is stored in ", dtype_name(W.dtype()),
        "; a shortlist needs its fp32 weights (use the fp32 model; --precision still applies)");
  const std::vector<int64_t> rows(ids.begin(), ids.end());
  Linear out;
  Tensor w = select_rows(W, rows).contiguous();  // [|ids|, d_model]
  out.W = Var(w);
  if (m.generator.b.defined()) out.b = Var(select_rows(m.generator.b.value(), rows).contiguous());
  const Precision p = m.generator.form.precision;
  out.form = m.generator.form.frozen ? inference_form(w, p) : training_form(p);
  return out;
}

// The decoder of a Transformer whose sentences each have a shortlist: every row's log-probs are
//   log softmax over its sentence's list of (h W_out^T + b), -inf for every other token,
// so that a sentence's output does not depend on the others in its batch. A step computes them
// one of two ways, whichever reads fewer rows of W_out [V, d_model]:
//   - each sentence's rows times its own list's rows of W_out (copied once per sentence): the
//     lists' total length in rows, the saving in small batches;
//   - the full output layer (V rows, shared by every row of the batch), then the softmax taken
//     again over each list (a log-softmax is unchanged by the shift of the full one): in large
//     batches the lists together cover more than V rows.
// Without the cache (the reference decoder) always the second.
struct ListedDecoder {
  const Transformer* model = nullptr;
  std::shared_ptr<StepDecoder> d;
  std::vector<std::vector<int32_t>> ids;  // per sentence, sorted
  std::vector<Linear> outputs;            // per sentence, made when first used
  std::vector<int64_t> sentence_of_row;   // which sentence each decoder row belongs to

  Tensor step(const std::vector<int32_t>& tokens) {
    const int64_t R = static_cast<int64_t>(tokens.size()), V = model->config.tgt_vocab;
    std::vector<std::vector<int64_t>> rows(ids.size());  // the rows of each sentence
    for (int64_t r = 0; r < R; ++r) rows[static_cast<size_t>(sentence_of_row[static_cast<size_t>(r)])].push_back(r);
    size_t listed = 0;
    for (size_t s = 0; s < ids.size(); ++s) listed += rows[s].empty() ? 0 : ids[s].size();
    const bool each = d->cached && static_cast<int64_t>(listed) < V;
    // each: the hidden states [R, d_model]; else the full log-probs [R, V]
    const Tensor h = each ? decode_step_hidden(*model, d->state, tokens) : attn::step(*d, tokens);
    // each: the sentences' logits [rows of s, |list|], made one product at a time
    std::vector<Tensor> z(ids.size());
    if (each)
      for (size_t s = 0; s < ids.size(); ++s) {
        if (rows[s].empty()) continue;
        if (!outputs[s].W.defined()) outputs[s] = listed_output(*model, ids[s]);
        z[s] = linear(Var(select_rows(h, rows[s])), outputs[s].W, outputs[s].b, outputs[s].form).value().contiguous();
      }
    Tensor out = Tensor::empty({R, V});
    for_each_index(
        static_cast<int64_t>(ids.size()), R * V >= (1 << 16),
        [&](int64_t s) {
          if (!rows[s].empty()) softmax_over_list(each ? z[s].data<float>() : nullptr, h, ids[s], rows[s], out);
        },
        /*dynamic=*/true);
    return out;
  }

  // out's rows of one sentence: log softmax over its list of z (each row's logits at the list,
  // [rows, |list|]) or, z null, of full's log-probs at the list ids; -inf elsewhere.
  static void softmax_over_list(const float* z, const Tensor& full, const std::vector<int32_t>& list,
                                const std::vector<int64_t>& rows, Tensor& out) {
    const int64_t n = static_cast<int64_t>(list.size()), V = out.size(1);
    std::vector<float> in(static_cast<size_t>(n)), logp(static_cast<size_t>(n));
    for (size_t i = 0; i < rows.size(); ++i) {
      const float* x = z ? z + static_cast<int64_t>(i) * n : in.data();
      if (!z) {
        const float* f = full.data<float>() + rows[i] * V;
        for (int64_t j = 0; j < n; ++j) in[static_cast<size_t>(j)] = f[list[static_cast<size_t>(j)]];
      }
      log_softmax_rows(x, logp.data(), 1, n);
      float* row = out.data<float>() + rows[i] * V;
      std::fill(row, row + V, -std::numeric_limits<float>::infinity());
      for (int64_t j = 0; j < n; ++j) row[list[static_cast<size_t>(j)]] = logp[static_cast<size_t>(j)];
    }
  }

  void select(const std::vector<int64_t>& rows, bool same) {
    select_rows(*d, rows, same);
    std::vector<int64_t> kept;
    for (int64_t r : rows) kept.push_back(sentence_of_row[static_cast<size_t>(r)]);
    sentence_of_row = std::move(kept);
  }
};

}  // namespace

RowDecoder start_row_decoder(const Transformer& m, const std::vector<std::vector<int32_t>>& sources, bool cached,
                             const std::vector<std::vector<int32_t>>& allowed, bool open_ended) {
  check(allowed.empty() || allowed.size() == sources.size(), "shortlist: ", allowed.size(), " lists for ",
        sources.size(), " sentences");
  const TransformerConfig& c = m.config;
  NoGrad no_grad;
  Tensor src = pad_ids(sources, c.pad_id);  // [batch, src_len]
  Tensor src_pad = padding_mask(src, c.pad_id);
  Tensor memory = encode_real_positions(m, src);  // [batch, src_len, d_model]
  const int64_t longest = src.size(1);
  auto d = std::make_shared<StepDecoder>(
      start_step_decoder(m, memory, src_pad, cached, open_ended ? 0 : longest + longest / 2 + 16));
  RowDecoder r;
  if (!allowed.empty()) {
    auto listed = std::make_shared<ListedDecoder>();
    listed->model = &m;
    listed->d = d;
    for (size_t s = 0; s < sources.size(); ++s) {
      check(!allowed[s].empty(), "shortlist: sentence ", s + 1, " has no token allowed");
      for (int32_t id : allowed[s])
        check(id >= 0 && id < c.tgt_vocab, "shortlist: id ", id, " not in the target vocabulary of ", c.tgt_vocab);
      listed->ids.push_back(allowed[s]);
      listed->sentence_of_row.push_back(static_cast<int64_t>(s));
    }
    listed->outputs.resize(sources.size());
    r.step = [listed](const std::vector<int32_t>& t) { return listed->step(t); };
    r.select_rows = [listed](const std::vector<int64_t>& rows, bool same) { listed->select(rows, same); };
  } else {
    r.step = [d](const std::vector<int32_t>& t) { return step(*d, t); };
    r.select_rows = [d](const std::vector<int64_t>& rows, bool same) { select_rows(*d, rows, same); };
    if (cached) {
      r.step_logits = [d](const std::vector<int32_t>& t, const LogitBlock& visit) {
        decode_step_logit_blocks(*d->model, d->state, t, visit);
      };
      r.add_sources = [d, &m](const std::vector<std::vector<int32_t>>& more) {
        NoGrad no_grad;
        Tensor ids = pad_ids(more, m.config.pad_id);
        add_sentences(m, d->state, encode_real_positions(m, ids), padding_mask(ids, m.config.pad_id));
      };
    }
  }
  r.bos_id = c.bos_id;
  r.eos_id = c.eos_id;
  r.tgt_vocab = c.tgt_vocab;
  r.max_len = c.max_len;
  return r;
}

RowDecoder start_row_decoder(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources, bool cached,
                             const std::vector<std::vector<int32_t>>& allowed, bool open_ended) {
  if (const auto* transformer = std::get_if<Transformer>(&m.net))
    return start_row_decoder(*transformer, sources, cached, allowed, open_ended);
  check(allowed.empty(), "shortlist: only a Transformer's output layer can be restricted, not the RNN's");
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
