// The labels of texts (attn classify, /v1/classify, attn.Classifier): one forward pass, each
// row of probabilities read most probable first.
#include "attn/classify/classify.h"

#include <algorithm>
#include <numeric>

#include "attn/data/text_file.h"
#include "attn/error.h"

namespace attn {

void check_top_k(int64_t top_k, const std::string& name) {
  check(top_k >= 1 && top_k <= kMaxTopK, name, " needs a whole number in 1 .. ", kMaxTopK, ", got '", top_k, "'");
}

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

}  // namespace attn
