// A POST /v1/translate body as the library's typed TranslateOptions. Each decoding field is an
// option of the library's table (translate/options.h) under CTranslate2's name, as the Python
// module's keywords (beam_size, num_hypotheses, sampling_topk, ..., seed), or under the API's
// short names beam, n_best and max_len. The values are checked for their JSON type here and then
// by the library as they are set, so a value the command line refuses is refused here with the
// same message, the option named as the body's field: one set of rules for the CLI, Python and HTTP.
#pragma once

#include <nlohmann/json.hpp>

#include "job.h"
#include "models.h"
#include "request.h"

namespace attn::serve {

// The work of a translate body for model m: options, sentences (each numbered within the request,
// in the pieces that fit the model) and their target prefixes. A mistake is an HttpError (400, or
// 413 past the limits).
TranslateWork translate_work(const nlohmann::json& body, const ServedModel& m, const RequestLimits& limits);

// The batching key of a translation: requests share a batch only when every option of the search
// is the same (the per-sentence inputs, prefixes and sampling keys, may differ).
std::string translate_key(const TranslateWork& w);

}  // namespace attn::serve
