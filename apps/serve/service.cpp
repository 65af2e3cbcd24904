#include "service.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <cstdio>

#include "attn/error.h"
#include "attn/decode/stream.h"
#include "attn/runtime.h"
#include "compute.h"
#include "translate_request.h"

namespace attn::serve {
namespace {

std::vector<std::string> names_of(const std::vector<std::unique_ptr<ServedModel>>& models) {
  std::vector<std::string> names;
  for (const auto& m : models) names.push_back(m->name);
  return names;
}

}  // namespace

Service::Service(std::vector<std::unique_ptr<ServedModel>> models, const ServiceOptions& options)
    : options_(options), models_(std::move(models)), metrics_(names_of(models_)), budget_(options.max_answer_memory) {
  for (const auto& m : models_) {
    const ServedModel* model = m.get();
    const int threads = options.threads;
    const int64_t rows = static_cast<int64_t>(options.batch.max_batch_sentences) * 4;  // beam 4, the default
    auto setup = [this, threads, model, rows] {
      if (threads > 0) set_threads(threads);  // OpenMP's thread count is per thread: set it here
      flush_denormals_everywhere();
      if (model->translator && std::holds_alternative<Transformer>(model->seq2seq().net))
        warm_up(std::get<Transformer>(model->seq2seq().net), rows);
      ++warm_threads_;
    };
    batcher_threads_ += options.batch.batching ? static_cast<size_t>(std::max(1, options.batch.batchers)) : 1;
    // The batcher's threads (--batchers) all call on_batch: the time of the last trim is theirs to
    // share, an atomic that one of them claims (a plain captured time was a data race, found by
    // scripts/sweep.sh's ThreadSanitizer stage).
    auto last_trim = std::make_shared<std::atomic<Clock::rep>>(Clock::now().time_since_epoch().count());
    auto on_batch = [this, name = m->name, last_trim](const BatchStats& s) {
      const Clock::time_point now = Clock::now();
      metrics_.batch(name, s, now);
      // Hand the heap's freed pages back to the system once a second: batches of every size free
      // blocks of every size, which glibc otherwise keeps (measured: ~60 MiB more resident after
      // 10,000 requests without this, docs/serve.md).
      Clock::rep last = last_trim->load();
      if (now - Clock::time_point(Clock::duration(last)) > std::chrono::seconds(1) &&
          last_trim->compare_exchange_strong(last, now.time_since_epoch().count()))
        malloc_trim(0);
    };
    batchers_[m->name] = std::make_unique<Batcher>(
        options.batch,
        [model, group = options.batch.max_batch_sentences](const std::vector<std::shared_ptr<Job>>& b) {
          compute_batch(*model, b, group);
        },
        setup, on_batch, [model, decoding = options.batch.max_batch_sentences] { return translation_stream(*model, decoding); },
        // and when the traffic stops, so an idle server holds only what it keeps (tests/serve/load_test.cpp
        // measures it there)
        [] { malloc_trim(0); });
  }
}

Service::~Service() { stop(); }

void Service::stop() {
  for (auto& [name, b] : batchers_) b->stop();
}

const ServedModel& Service::model_for(const nlohmann::json& body, Task task) const {
  const std::string name = string_field(body, "model", models_.size() == 1 ? models_.front()->name : "", false);
  if (name.empty()) throw HttpError(400, "\"model\" is missing (this server has several: GET /v1/models)");
  for (const auto& m : models_) {
    if (m->name != name) continue;
    if (task != Task::any && (task == Task::classification) != m->classifier.has_value())
      throw HttpError(400, "model '" + name + "' is a " + m->kind() +
                               (m->classifier ? ": use /v1/classify" : ", not a classifier"));
    return *m;
  }
  throw HttpError(404, "no model named '" + name + "' (GET /v1/models lists them)");
}

Outcome Service::run(const ServedModel& m, std::shared_ptr<Job> job) {
  std::future<Outcome> answer = job->future();
  if (job->sentences > options_.batch.max_queue)
    throw HttpError(413, "the request holds " + std::to_string(job->sentences) + " sentences (pieces), more than model '" +
                             m.name + "' queues at once (--max-queue " + std::to_string(options_.batch.max_queue) + ")");
  // The answer's size is bounded before anything is computed: past the limit the request is
  // refused and told what to ask for; within it, it reserves its share of the memory the answers
  // in flight may hold (the JSON tree and its text exist together while it is written: twice the
  // bound), waiting while others hold it.
  const AnswerSize size = answer_size(m, job->work);
  if (size.bytes > options_.limits.max_answer_bytes)
    throw HttpError(413, "the answer would take up to " + std::to_string(size.bytes) + " bytes, more than " +
                             std::to_string(options_.limits.max_answer_bytes) + " (--max-answer-mib): " + size.advice);
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  std::shared_ptr<void> hold = budget_.take(2 * size.bytes, deadline);
  if (!hold)
    throw HttpError(503, "the answers in flight hold the server's " + std::to_string(budget_.capacity()) +
                             " bytes for answers (--answer-memory-mib): retry later");
  if (!batchers_.at(m.name)->submit(job))
    throw HttpError(503, "model '" + m.name + "' has " + std::to_string(options_.batch.max_queue) +
                             " sentences queued (--max-queue) or is stopping: retry later");
  // Waits in slices, so that a client gone is noticed (an answer on time costs no look at it); a
  // request given up is cancelled, and its batcher drops its work (batcher.h).
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (answer.wait_until(client_gone_ ? std::min(deadline, now + kWatchClient) : deadline) ==
        std::future_status::ready) {
      Outcome o = answer.get();
      o.hold = std::move(hold);
      return o;
    }
    if (Clock::now() >= deadline) {
      job->cancelled = true;
      throw HttpError(504, "no answer within " + std::to_string(options_.timeout_ms) + " ms (--timeout-ms)");
    }
    if (client_gone_()) {
      job->cancelled = true;
      throw HttpError(499, "the client closed the connection before the answer");
    }
  }
}

Outcome Service::translate(const nlohmann::json& body) {
  const ServedModel& m = model_for(body, Task::translation);
  auto job = std::make_shared<Job>();
  TranslateWork w = translate_work(body, m, options_.limits);
  for (const SourceLine& line : w.lines) {
    job->sentences += line.pieces.size();
    for (const auto& piece : line.pieces) job->tokens += piece.size();
  }
  job->key = translate_key(w);
  job->work = std::move(w);
  return run(m, std::move(job));
}

}  // namespace attn::serve
