// What attn classify, attn serve's /v1/classify and the Python module's Classifier share: the
// labels of a row of probabilities, most probable first, and of a batch of texts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "attn/classify/options.h"
#include "attn/models/classifier_dir.h"

namespace attn {

// The k classes of highest probability in row[0 .. classes), most probable first (k at most classes).
std::vector<int64_t> top_classes(const float* row, int64_t classes, int64_t k);

// For each text, its k most probable (label id, probability), most probable first (all labels
// when k is more); none for a blank text (data/text_file.h). One forward pass for all.
std::vector<std::vector<std::pair<int64_t, float>>> classify_texts(const ClassifierModel& m,
                                                                   const std::vector<std::string>& texts, int64_t k);

// The same as options ask: labels_per_text(o) labels each, in forward passes of o.batch texts
// (attn classify's batches of standard input, Python's classify_batch). Each text is padded to the
// model's pad_size alone, so the batching changes its probabilities only by the products' rounding
// (about 1e-9). `between`, when given, runs after each forward pass but the last: a caller's
// chance to stop (Python raises KeyboardInterrupt from it).
std::vector<std::vector<std::pair<int64_t, float>>> classify_texts(const ClassifierModel& m,
                                                                   const std::vector<std::string>& texts,
                                                                   const ClassifyOptions& o,
                                                                   const std::function<void()>& between = {});

}  // namespace attn
