// A request's work for one model, as the HTTP handler hands it to the model's batcher: what to
// compute, what it costs against the batch limits, and the promise its answer comes back through.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <new>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/attend/attend.h"
#include "attn/classify/options.h"
#include "attn/error.h"
#include "attn/translate/options.h"
#include "attn/translate/translator.h"

namespace attn::serve {

using Clock = std::chrono::steady_clock;

// Translations: every sentence as the library's Translator reads a line (translate/translator.h:
// numbered from 1 within its request, in the pieces that fit the model's positions, with its
// target prefix), with the request's typed options (use_shortlist: decoded over the model's
// shortlist, attn serve --shortlist). `tokenized`: text in and out (else token ids, `inputs` then
// holding them as "5 9 14"). attention: each translation with its attend document.
struct TranslateWork {
  TranslateOptions options;
  bool tokenized = true, attention = false;
  std::vector<std::string> inputs;
  std::vector<SourceLine> lines;
};

// Log-probabilities of targets given sources (attn score).
struct ScoreWork {
  std::vector<std::vector<int32_t>> sources, targets;
};

// Labels of texts (attn classify): the request's typed options (classify/options.h: top_k, all
// labels above the model's), each text with every class's probability.
struct ClassifyWork {
  std::vector<std::string> texts;
  ClassifyOptions options;
};

// The attention weights of one sentence (attn attend): the JSON document or its HTML page.
struct AttentionWork {
  AttendRequest request;
  bool html = false;
};

using Work = std::variant<TranslateWork, ScoreWork, ClassifyWork, AttentionWork>;

// What the handler answers: a status, and a JSON body (or an HTML page).
struct Outcome {
  int status = 200;
  nlohmann::json json;
  std::string html;
  // Its share of the answers' memory budget (answer_size.h), given back once it is sent.
  std::shared_ptr<void> hold = nullptr;
};

struct Job {
  Work work;
  std::string key;         // jobs of one key may share a batch: the kind of work and its options
  size_t tokens = 0;       // its cost against --max-batch-tokens: source tokens
  size_t sentences = 0;
  Clock::time_point queued;
  // Its request timed out or its client went away: nobody waits for it any more. The batcher
  // drops it from the queue, or from its stream at the next step (batcher.h).
  std::atomic<bool> cancelled{false};

  // Sets the answer once; later calls do nothing (so an error path cannot overwrite an answer).
  void finish(Outcome o) {
    std::call_once(answered_, [&] {
      promise_.set_value(std::move(o));
      done_ = true;
    });
  }
  bool answered() const { return done_; }
  std::future<Outcome> future() { return promise_.get_future(); }

 private:
  std::once_flag answered_;
  std::atomic<bool> done_{false};
  std::promise<Outcome> promise_;
};

// The answer to a job whose computing threw: a library check on the request's values is the
// client's error (400, as the HTTP handler answers it), memory running out is 503 (retry later),
// anything else the server's (500).
inline Outcome failure(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& x) {
    return {400, {{"error", x.what()}}, ""};
  } catch (const std::bad_alloc&) {
    return {503, {{"error", "out of memory: retry later, or send less at once"}}, ""};
  } catch (const std::exception& x) {
    return {500, {{"error", x.what()}}, ""};
  } catch (...) {
    return {500, {{"error", "internal error"}}, ""};
  }
}

}  // namespace attn::serve
