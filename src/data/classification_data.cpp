#include "attn/data/classification_data.h"

#include <algorithm>
#include <set>

#include "attn/data/text_file.h"
#include "attn/error.h"

namespace attn::data {

std::vector<LabelledText> read_labelled(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  std::vector<LabelledText> rows;
  rows.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    size_t tab = lines[i].find('\t');
    check(tab != std::string::npos && tab > 0, path, ":", i + 1, ": expected label<TAB>text, got '",
          lines[i].substr(0, 60), "'");
    rows.push_back({lines[i].substr(0, tab), lines[i].substr(tab + 1)});
  }
  check(!rows.empty(), path, ": no labelled lines");
  return rows;
}

std::vector<std::string> label_set(const std::vector<LabelledText>& rows) {
  std::set<std::string> s;
  for (const auto& r : rows) s.insert(r.label);
  return {s.begin(), s.end()};
}

std::vector<int32_t> label_ids(const std::vector<LabelledText>& rows, const std::vector<std::string>& labels,
                               const std::string& source) {
  std::vector<int32_t> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    auto it = std::find(labels.begin(), labels.end(), r.label);
    check(it != labels.end(), source, ": label '", r.label, "' is not one of the model's ", labels.size(), " classes");
    out.push_back(static_cast<int32_t>(it - labels.begin()));
  }
  return out;
}

ClassificationSet encode_set(const std::vector<LabelledText>& rows, const std::vector<std::string>& labels,
                             const CharVocab& vocab, int64_t length, bool cls, const std::string& source) {
  ClassificationSet s;
  s.length = length;
  s.labels = label_ids(rows, labels, source);
  s.ids.reserve(rows.size() * static_cast<size_t>(length));
  for (const auto& r : rows) {
    std::vector<int32_t> ids = vocab.encode(r.text, length, cls);
    s.ids.insert(s.ids.end(), ids.begin(), ids.end());
  }
  return s;
}

void gather_batch(const ClassificationSet& s, const std::vector<int64_t>& order, int64_t begin, int64_t end,
                  Tensor* ids, Tensor* labels) {
  int64_t n = end - begin, L = s.length;
  *ids = Tensor::empty({n, L}, DType::i32);
  *labels = Tensor::empty({n}, DType::i32);
  int32_t* id = ids->data<int32_t>();
  int32_t* lab = labels->data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t row = order[static_cast<size_t>(begin + i)];
    std::copy_n(s.ids.data() + row * L, L, id + i * L);
    lab[i] = s.labels[static_cast<size_t>(row)];
  }
}

}  // namespace attn::data
