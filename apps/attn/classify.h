// What attn classify, attn serve's /v1/classify and the Python module's Classifier share: the
// labels of a row of probabilities, most probable first, and of a batch of texts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/classifier_dir.h"

namespace attn::cli {

// The k classes of highest probability in row[0 .. classes), most probable first.
std::vector<int64_t> top_classes(const float* row, int64_t classes, int64_t k);

// For each text, its k most probable (label id, probability), most probable first; none for a
// blank text (data/text_file.h). One forward pass for all.
std::vector<std::vector<std::pair<int64_t, float>>> classify_texts(const ClassifierModel& m,
                                                                   const std::vector<std::string>& texts, int64_t k);

}  // namespace attn::cli
