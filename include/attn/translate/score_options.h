// The options of scoring pairs (Translator::score): attn score's flag (--batch) and the Python
// module's keyword argument (Translator.score_batch's max_batch_size) are one table,
// score_option_fields() (option_table.h), so they share a default, a range and a message. The
// server's /v1/score takes none: it batches the pairs of its requests itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/option_table.h"

namespace attn {

struct ScoreOptions {
  int64_t batch = 32;  // pairs scored together (batched by length)
};

using ScoreOptionField = WholeOption<ScoreOptions>;
using ScoreOptionsBuilder = WholeOptionsBuilder<ScoreOptions>;

// Every option of scoring, in --help's order.
const std::vector<ScoreOptionField>& score_option_fields();
// The field of key `key` (it must exist).
const ScoreOptionField& score_option(const std::string& key);

}  // namespace attn
