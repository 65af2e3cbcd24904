// What a model's batcher thread computes: a batch of jobs of one key, with the same library calls
// the CLI makes (search, score_translations, classifier_probabilities, the attend document), so
// that the server and the CLI cannot drift. Each job is finished with its answer.
#pragma once

#include <memory>
#include <vector>

#include "job.h"
#include "models.h"

namespace attn::serve {

// group: sentences searched together at most; a larger batch (one large request) is sorted by
// length into searches of that many, as attn translate --batch does.
void compute_batch(const ServedModel& m, const std::vector<std::shared_ptr<Job>>& batch, size_t group);

}  // namespace attn::serve
