#include "attn/decode/ensemble.h"

#include <cmath>

#include "attn/decode/score.h"
#include "attn/error.h"

namespace attn {

std::vector<EnsembleMember> make_ensemble(const std::vector<const Seq2Seq*>& models, const std::vector<double>& weights) {
  check(!models.empty(), "ensemble: no model");
  check(weights.empty() || weights.size() == models.size(), "ensemble: ", models.size(), " models but ",
        weights.size(), " weights");
  std::vector<EnsembleMember> members;
  bool any_weight = false;
  const Seq2SeqCommon first = models.front()->common();
  for (size_t i = 0; i < models.size(); ++i) {
    const double w = weights.empty() ? 1.0 / static_cast<double>(models.size()) : weights[i];
    check(std::isfinite(w) && w >= 0, "ensemble: weight ", i + 1, " must be a finite number >= 0, got ", w);
    any_weight = any_weight || w > 0;
    const Seq2SeqCommon c = models[i]->common();
    check(c.tgt_vocab == first.tgt_vocab && c.bos_id == first.bos_id && c.eos_id == first.eos_id, "ensemble: model ",
          i + 1, " has a target vocabulary of ", c.tgt_vocab, " (bos ", c.bos_id, ", eos ", c.eos_id, "), model 1 of ",
          first.tgt_vocab, " (bos ", first.bos_id, ", eos ", first.eos_id, "): the models must share it");
    members.push_back({models[i], w});
  }
  check(any_weight, "ensemble: every weight is 0");
  return members;
}

std::vector<std::vector<Hypothesis>> search(const std::vector<EnsembleMember>& members,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o, const SentenceInputs& in) {
  check(!members.empty(), "ensemble: no model");
  check_search_options(o, members.front().model->common().tgt_vocab);
  if (sources.empty()) return {};
  std::vector<RowDecoder> decoders;
  std::vector<double> weights;
  for (const EnsembleMember& m : members) {
    decoders.push_back(start_row_decoder(*m.model, sources, o.use_cache, in.allowed));
    weights.push_back(m.weight);
  }
  RowDecoder ensemble = ensemble_row_decoder(std::move(decoders), weights);
  std::vector<int64_t> lengths;
  for (const auto& s : sources) lengths.push_back(static_cast<int64_t>(s.size()));
  return search(ensemble, lengths, o, in);
}

std::vector<double> score_translations(const std::vector<EnsembleMember>& members,
                                       const std::vector<std::vector<int32_t>>& sources,
                                       const std::vector<std::vector<int32_t>>& targets) {
  check(!members.empty(), "ensemble: no model");
  std::vector<double> totals(sources.size(), 0.0);
  for (const EnsembleMember& m : members) {
    const std::vector<double> s = score_translations(*m.model, sources, targets);
    for (size_t i = 0; i < s.size(); ++i) totals[i] += m.weight * s[i];
  }
  return totals;
}

}  // namespace attn
