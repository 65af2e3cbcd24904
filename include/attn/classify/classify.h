// What attn classify, attn serve's /v1/classify and the Python module's Classifier share: the
// labels of a row of probabilities, most probable first, and of a batch of texts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/classifier_dir.h"

namespace attn {

// The most labels a text may ask for (top_k, --top-k): 1 .. kMaxTopK.
constexpr int64_t kMaxTopK = 1 << 20;
// top_k in 1 .. kMaxTopK, else an attn::Error naming it as `name`.
void check_top_k(int64_t top_k, const std::string& name);

// The k classes of highest probability in row[0 .. classes), most probable first.
std::vector<int64_t> top_classes(const float* row, int64_t classes, int64_t k);

// For each text, its k most probable (label id, probability), most probable first; none for a
// blank text (data/text_file.h). One forward pass for all.
std::vector<std::vector<std::pair<int64_t, float>>> classify_texts(const ClassifierModel& m,
                                                                   const std::vector<std::string>& texts, int64_t k);

}  // namespace attn
