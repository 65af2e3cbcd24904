// Bounds on what one answer costs, known before anything is computed, so that a request of a
// few KB cannot make the server build an answer of hundreds of MB (issue 50: a 2.5 KB
// /v1/attention request was answered with 176 MB, and took ~200 MB of the server's memory while
// in flight; four at once reached 910 MB).
//   - Each answer's JSON (or HTML page) text is bounded from above by what the request asks: the
//     attention maps' weights (layers x heads x queries x keys of each stack, the target at most
//     the search's longest output), a translation's tokens, hypotheses and alignments. Past
//     RequestLimits::max_answer_bytes the request is refused (413) and told what to ask for.
//   - The answers in flight (computing, waiting to be written, being sent) hold at most
//     AnswerBudget's bytes between them: a request takes twice its bound (the JSON tree and its
//     text exist together while it is written) before it is queued, waits while the budget is
//     spent, and gives it back once its answer is sent.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "job.h"
#include "models.h"

namespace attn::serve {

// The most bytes of JSON one weight of an attention map takes: a float widened to double and
// written by its shortest round-trip form ("1.2345678163389675e-05", 22) and a comma.
constexpr size_t kWeightBytes = 24;

// Upper bounds of the answer's text, from the request's work (its options and sentences).
size_t attention_answer_bytes(const ServedModel& m, const AttentionWork& w);
size_t translation_answer_bytes(const ServedModel& m, const TranslateWork& w);

// Any route's work: the bound of its answer and, for a refusal past the limit, what to ask instead.
struct AnswerSize {
  size_t bytes = 0;
  std::string advice;
};
AnswerSize answer_size(const ServedModel& m, const Work& w);

// The bytes the answers in flight may hold between them.
class AnswerBudget {
 public:
  explicit AnswerBudget(size_t bytes) : capacity_(bytes) {}
  size_t capacity() const { return capacity_; }
  size_t in_use() const;
  // Takes `bytes` (at most the capacity), waiting until they are free or `deadline`; null when
  // the deadline passed first. The bytes come back when the last copy of the result is dropped.
  std::shared_ptr<void> take(size_t bytes, std::chrono::steady_clock::time_point deadline);

 private:
  void give_back(size_t bytes);
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  size_t used_ = 0;
};

}  // namespace attn::serve
