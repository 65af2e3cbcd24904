// Labelled texts for classification: files of `label<TAB>text` lines (the shared cls-* sets),
// the label set, and fixed-length id batches ([batch, pad_size] ids, [batch] class ids).
#pragma once

#include <string>
#include <vector>

#include "attn/data/char_vocab.h"
#include "attn/tensor/tensor.h"

namespace attn::data {

struct LabelledText {
  std::string label, text;
};

// Every line must hold a tab; the label is before the first tab. Errors name path:line.
std::vector<LabelledText> read_labelled(const std::string& path);

// The distinct labels, sorted (a fixed class order for any file order).
std::vector<std::string> label_set(const std::vector<LabelledText>& rows);
// The class id of each row; a label outside `labels` is an error naming it and `source`.
std::vector<int32_t> label_ids(const std::vector<LabelledText>& rows, const std::vector<std::string>& labels,
                               const std::string& source);

struct ClassificationSet {
  std::vector<int32_t> ids;     // [n, pad_size] row-major
  std::vector<int32_t> labels;  // [n]
  int64_t length = 0;           // pad_size
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

ClassificationSet encode_set(const std::vector<LabelledText>& rows, const std::vector<std::string>& labels,
                             const CharVocab& vocab, int64_t length, bool cls, const std::string& source);

// Rows `order[begin, end)` of the set: ids [n, length] and labels [n].
void gather_batch(const ClassificationSet& s, const std::vector<int64_t>& order, int64_t begin, int64_t end,
                  Tensor* ids, Tensor* labels);

}  // namespace attn::data
