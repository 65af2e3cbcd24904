// What attn classify and attn serve's /v1/classify share: the labels of a row of probabilities,
// most probable first.
#pragma once

#include <cstdint>
#include <vector>

namespace attn::cli {

// The k classes of highest probability in row[0 .. classes), most probable first.
std::vector<int64_t> top_classes(const float* row, int64_t classes, int64_t k);

}  // namespace attn::cli
