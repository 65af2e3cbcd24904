// The labels of texts (attn classify, /v1/classify, attn.Classifier): one forward pass, each
// row of probabilities read most probable first.
#include "attn/classify/classify.h"

#include <algorithm>
#include <numeric>

#include "attn/data/text_file.h"
#include "attn/error.h"

namespace attn {

std::vector<int64_t> top_classes(const float* row, int64_t classes, int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(classes));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
  order.resize(static_cast<size_t>(k));
  return order;
}

std::vector<std::vector<std::pair<int64_t, float>>> classify_texts(const ClassifierModel& m,
                                                                   const std::vector<std::string>& texts, int64_t k) {
  std::vector<std::string> sentences;
  for (const std::string& t : texts)
    if (!data::is_blank(t)) sentences.push_back(t);
  Tensor p = sentences.empty() ? Tensor() : classifier_probabilities(m.model, encode_texts(m, sentences));
  const int64_t C = static_cast<int64_t>(m.labels.size());
  k = std::min(k, C);  // all labels for a larger k (classify/options.h's rule)
  const float* prob = sentences.empty() ? nullptr : p.data<float>();
  std::vector<std::vector<std::pair<int64_t, float>>> out(texts.size());
  int64_t next = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (data::is_blank(texts[i])) continue;
    const float* row = prob + next++ * C;
    for (int64_t c : top_classes(row, C, k)) out[i].emplace_back(c, row[c]);
  }
  return out;
}

std::vector<std::vector<std::pair<int64_t, float>>> classify_texts(const ClassifierModel& m,
                                                                   const std::vector<std::string>& texts,
                                                                   const ClassifyOptions& o,
                                                                   const std::function<void()>& between) {
  const int64_t k = labels_per_text(o, static_cast<int64_t>(m.labels.size()));
  const size_t batch = static_cast<size_t>(std::max<int64_t>(o.batch, 1));
  std::vector<std::vector<std::pair<int64_t, float>>> out;
  out.reserve(texts.size());
  for (size_t begin = 0; begin < texts.size(); begin += batch) {
    if (begin > 0 && between) between();
    const auto first = texts.begin() + static_cast<std::ptrdiff_t>(begin);
    const std::vector<std::string> part(first, first + static_cast<std::ptrdiff_t>(std::min(batch, texts.size() - begin)));
    for (auto& top : classify_texts(m, part, k)) out.push_back(std::move(top));
  }
  return out;
}

}  // namespace attn
