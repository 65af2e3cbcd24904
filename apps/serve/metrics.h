// GET /metrics in Prometheus' text format (version 0.0.4):
//   attn_serve_requests_total{route,code}      requests answered, by route and HTTP status
//   attn_serve_request_seconds                 histogram of the time to answer (all routes)
//   attn_serve_queue_sentences{model}          sentences queued, not yet computing (a gauge)
//   attn_serve_batch_sentences{model}          histogram of sentences per computed batch (a
//                                              continuous batch: per step, those decoded together)
//   attn_serve_sentences_total{model}, attn_serve_tokens_total{model}   computed (source tokens)
//   attn_serve_compute_seconds_total{model}    time the model's batcher spent computing
//   attn_serve_tokens_per_second{model}        source tokens computed per second, last 10 s
//   attn_serve_cancelled_requests_total{model}, attn_serve_cancelled_sentences_total{model}
//                                              jobs dropped unfinished (timed out, client gone)
//                                              and their sentences not computed
//   attn_serve_tensor_bytes{kind}              tensor memory: live, peak live, cached for reuse
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "batcher.h"

namespace attn::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void observe(double x);
  // The _bucket (cumulative), _sum and _count lines of `name` with `labels` ("" or `model="x"`).
  std::string render(const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<size_t> counts_;  // counts_[i]: observations in (bounds_[i-1], bounds_[i]]; last: above all
  double sum_ = 0;
  size_t count_ = 0;
};

class Metrics {
 public:
  explicit Metrics(const std::vector<std::string>& models);
  void request(const std::string& route, int status);  // every response, the HTTP layer's own included
  size_t answers(int status);                           // responses of that status so far, every route
  void latency(double seconds);                         // of a request a route's handler answered
  void batch(const std::string& model, const BatchStats& s, Clock::time_point now);
  // queue_depth(model): the sentences its batcher holds, read when rendering.
  std::string render(const std::function<size_t(const std::string&)>& queue_depth, Clock::time_point now);

 private:
  struct PerModel {
    Histogram batch_sentences{{1, 2, 4, 8, 16, 32, 64, 128, 256}};
    double sentences = 0, tokens = 0, seconds = 0, cancelled_requests = 0, cancelled_sentences = 0;
    std::deque<std::pair<Clock::time_point, size_t>> recent;  // (when, tokens) of the last 10 s
  };
  std::mutex mutex_;
  std::map<std::pair<std::string, int>, size_t> requests_;
  Histogram latency_{{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}};
  std::map<std::string, PerModel> models_;
};

}  // namespace attn::serve
