// What a model's batcher thread computes: a batch of jobs of one key, with the same library calls
// the CLI makes (search, score_translations, classifier_probabilities, the attend document), so
// that the server and the CLI cannot drift. Each job is finished with its answer.
#pragma once

#include <memory>
#include <vector>

#include "batcher.h"
#include "job.h"
#include "models.h"

namespace attn::serve {

// group: sentences searched together at most; a larger batch (one large request) is sorted by
// length into searches of that many, as attn translate --batch does.
void compute_batch(const ServedModel& m, const std::vector<std::shared_ptr<Job>>& batch, size_t group);

// Finishes a translation job with its answer: its lines' hypotheses found[first ...], each line's
// JSON object as attn translate --output-format jsonl prints it.
void answer_translations(const ServedModel& m, Job& job, const std::vector<std::vector<Hypothesis>>& found,
                         size_t first);

// The continuous batch of a Transformer's translations (the library's TranslationStream,
// translate/stream.h, behind batcher.h's Stream): jobs whose options stream (no sampling,
// shortlist or attention) and are the same join it; each job is one request of it, answered as the
// CLI would answer it once its last sentence is done. At most max_decoding sentences decode at
// once (a larger job's others wait in the stream). Null for a model that has none (an RNN, a
// classifier).
std::unique_ptr<Stream> translation_stream(const ServedModel& m, size_t max_decoding);

}  // namespace attn::serve
