// The labels attn classify gives a batch of texts, shared by the binary and the Python module.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/classifier_dir.h"

namespace attn::cli {

// For each text, its k most probable (label id, probability), most probable first (ties: the
// partial sort's order); none for a blank text (data/text_file.h). One forward pass for all.
std::vector<std::vector<std::pair<int64_t, float>>> classify_texts(const ClassifierModel& m,
                                                                   const std::vector<std::string>& texts, int64_t k);

}  // namespace attn::cli
