// The options of a classification, as every front end takes them: attn classify's flags (--top-k,
// --batch), the Python module's keyword arguments (Classifier.classify_batch's top_k,
// max_batch_size) and attn serve's /v1/classify JSON field (top_k) are one table,
// classify_option_fields(), each option declared there once with its names, range, default
// (ClassifyOptions{}'s) and help (option_table.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/option_table.h"

namespace attn {

// The most labels a text may ask for (top_k, --top-k): 1 .. kMaxTopK.
constexpr int64_t kMaxTopK = 1 << 20;

struct ClassifyOptions {
  // Labels per text, most probable first. A top_k above the model's labels gives them all
  // (labels_per_text): the rule of every front end, so that one request or command line can ask
  // "all labels" of any model, as attn classify always allowed.
  int64_t top_k = 1;
  int64_t batch = 256;  // texts per forward pass (the server batches its requests itself)
};

using ClassifyOptionField = WholeOption<ClassifyOptions>;
using ClassifyOptionsBuilder = WholeOptionsBuilder<ClassifyOptions>;

// Every option of a classification, in --help's order.
const std::vector<ClassifyOptionField>& classify_option_fields();
// The field of key `key` (it must exist).
const ClassifyOptionField& classify_option(const std::string& key);
// The option `name` names for a front end (its flag for kCli, its key otherwise); null if none.
const ClassifyOptionField* find_classify_option(const std::string& name, unsigned front_end);

// The labels each text gets from a model of `labels` labels: top_k, at most all of them.
int64_t labels_per_text(const ClassifyOptions& o, int64_t labels);

}  // namespace attn
