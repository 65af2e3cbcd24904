// Translator::score: the log-probability of given targets (attn score, Translator.score_batch,
// /v1/score).
#include "attn/data/text_file.h"
#include "attn/decode/batch.h"
#include "attn/decode/ensemble.h"
#include "attn/decode/score.h"
#include "attn/error.h"
#include "attn/translate/translator.h"

namespace attn {

std::vector<std::vector<int32_t>> encode_score_lines(const std::vector<std::string>& texts, const std::string& name,
                                                     const data::Tokenizer& tokenizer, int32_t eos, int64_t max_len) {
  std::vector<std::vector<int32_t>> lines;
  for (const std::string& text : texts) {
    // A blank source holds no sentence to condition on (a blank target is scored: eos alone).
    check(eos < 0 || !data::is_blank(text), name, ":", lines.size() + 1, ": blank source line, nothing to condition on");
    lines.push_back(tokenizer.encode(text));
    if (eos >= 0) lines.back().push_back(eos);
    // The source's positions hold x + eos; the target's hold bos + y (and y + eos is scored).
    const size_t positions = lines.back().size() + (eos >= 0 ? 0 : 1);
    check(max_len <= 0 || positions <= static_cast<size_t>(max_len), name, ":", lines.size(), ": ",
          positions, " positions (", lines.back().size() - (eos >= 0 ? 1 : 0), " tokens and the ",
          eos >= 0 ? "eos" : "bos", "), more than the model's max_len ", max_len);
  }
  return lines;
}

std::vector<double> Translator::score(const std::vector<std::vector<int32_t>>& sources,
                                      const std::vector<std::vector<int32_t>>& targets, int batch,
                                      const std::function<void()>& between) const {
  check(sources.size() == targets.size(), "line counts differ: ", sources.size(), " sources, ", targets.size(),
        " targets");
  const std::vector<EnsembleMember> members = this->members();
  std::vector<size_t> lengths;
  for (size_t i = 0; i < sources.size(); ++i) lengths.push_back(sources[i].size() + targets[i].size());
  std::vector<double> totals(sources.size());
  const auto groups = length_sorted_batches(lengths, static_cast<size_t>(batch));
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0 && between) between();
    const auto& group = groups[g];
    std::vector<std::vector<int32_t>> src, tgt;
    for (size_t i : group) {
      src.push_back(sources[i]);
      tgt.push_back(targets[i]);
    }
    std::vector<double> out = members.empty() ? score_translations(model(), src, tgt) : score_translations(members, src, tgt);
    for (size_t j = 0; j < group.size(); ++j) totals[group[j]] = out[j];
  }
  return totals;
}

}  // namespace attn
