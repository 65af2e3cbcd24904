// attn serve without the HTTP: the models, one batcher each, the metrics, and one method per
// route taking the request's JSON body. Handlers only parse, enqueue and wait (the model's batcher
// thread computes, compute.h); a mistake in the request is an HttpError (request.h). The HTTP
// layer (http.h) and the tests call the same methods.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "answer_size.h"
#include "batcher.h"
#include "job.h"
#include "metrics.h"
#include "models.h"
#include "request.h"

namespace attn::serve {

struct ServiceOptions {
  BatchLimits batch;
  RequestLimits limits;
  int timeout_ms = 30000;  // a request not answered by then gets 504 (its job is cancelled)
  int threads = 0;         // threads of each batcher's products (0: OpenMP's default)
  // The answers in flight hold at most this much between them (answer_size.h): a request reserves
  // twice its answer's bound before it is queued, and waits (until its timeout: 503) while it is spent.
  size_t max_answer_memory = 256u << 20;
};

// POST /v1/attention's body as the work for model m (HttpError for a mistake in it).
AttentionWork attention_work(const nlohmann::json& body, const ServedModel& m, const RequestLimits& limits);

class Service {
 public:
  Service(std::vector<std::unique_ptr<ServedModel>> models, const ServiceOptions& options);
  ~Service();

  Outcome translate(const nlohmann::json& body);  // POST /v1/translate
  Outcome score(const nlohmann::json& body);      // POST /v1/score
  Outcome classify(const nlohmann::json& body);   // POST /v1/classify
  Outcome attention(const nlohmann::json& body);  // POST /v1/attention ("format": "json" | "html")
  Outcome libretranslate(const nlohmann::json& body);  // POST /translate (libretranslate.cpp)
  nlohmann::json languages() const;                    // GET /languages (libretranslate.cpp)
  nlohmann::json models() const;                       // GET /v1/models
  std::string metrics_text();                          // GET /metrics
  Metrics& metrics() { return metrics_; }
  const AnswerBudget& answer_budget() const { return budget_; }
  // Every batcher thread has warmed its model (the first products' kernels and buffers made):
  // until then a request would wait seconds, so /health says "loading".
  bool ready() const { return warm_threads_ >= batcher_threads_; }
  const ServiceOptions& options() const { return options_; }

  // While a request waits for its answer, `gone` is asked every kWatchClient on the waiting
  // thread: true when the request's client has closed its connection (connection.h); its job is
  // then cancelled. Unset (the tests' direct calls): only the timeout cancels.
  void watch_clients(std::function<bool()> gone) { client_gone_ = std::move(gone); }
  static constexpr std::chrono::milliseconds kWatchClient{50};

  // Computes every queued job, then ends the batchers (SIGTERM's drain). Idempotent.
  void stop();

 private:
  enum class Task { translation, classification, any };
  // The model body["model"] names (404 when none is served under that name; may be left out when
  // one model is served), which must serve `task` (400 otherwise).
  const ServedModel& model_for(const nlohmann::json& body, Task task) const;
  // Queues the job on the model's batcher and waits for its answer: 503 when the queue is full,
  // 504 past the timeout.
  Outcome run(const ServedModel& m, std::shared_ptr<Job> job);

  ServiceOptions options_;
  std::vector<std::unique_ptr<ServedModel>> models_;
  Metrics metrics_;
  std::function<bool()> client_gone_;
  AnswerBudget budget_;
  std::atomic<size_t> warm_threads_{0};
  size_t batcher_threads_ = 0;
  std::map<std::string, std::unique_ptr<Batcher>> batchers_;
};

}  // namespace attn::serve
