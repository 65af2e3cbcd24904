#include "metrics.h"

#include <malloc.h>

#include <cstdio>

#include "attn/tensor/tensor.h"

namespace attn::serve {
namespace {

constexpr double kRecentSeconds = 10;

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string with(const std::string& labels, const std::string& more) {
  if (labels.empty()) return "{" + more + "}";
  return "{" + labels + "," + more + "}";
}

std::string braces(const std::string& labels) { return labels.empty() ? "" : "{" + labels + "}"; }

}  // namespace

void Histogram::observe(double x) {
  size_t i = 0;
  while (i < bounds_.size() && x > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += x;
  ++count_;
}

std::string Histogram::render(const std::string& name, const std::string& labels) const {
  std::string out;
  size_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket" + with(labels, "le=\"" + number(bounds_[i]) + "\"") + " " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket" + with(labels, "le=\"+Inf\"") + " " + std::to_string(count_) + "\n";
  out += name + "_sum" + braces(labels) + " " + number(sum_) + "\n";
  out += name + "_count" + braces(labels) + " " + std::to_string(count_) + "\n";
  return out;
}

Metrics::Metrics(const std::vector<std::string>& models) {
  for (const std::string& m : models) models_[m];
}

void Metrics::request(const std::string& route, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, status}];
}

size_t Metrics::answers(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [key, count] : requests_)
    if (key.second == status) n += count;
  return n;
}

void Metrics::latency(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  latency_.observe(seconds);
}

void Metrics::batch(const std::string& model, const BatchStats& s, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  PerModel& m = models_[model];
  m.cancelled_requests += static_cast<double>(s.cancelled_jobs);
  m.cancelled_sentences += static_cast<double>(s.cancelled_sentences);
  if (s.together == 0 && s.sentences == 0 && s.seconds == 0) return;  // only dropped jobs: no batch
  m.batch_sentences.observe(static_cast<double>(s.together > 0 ? s.together : s.sentences));
  m.sentences += static_cast<double>(s.sentences);
  m.tokens += static_cast<double>(s.tokens);
  m.seconds += s.seconds;
  m.recent.emplace_back(now, s.tokens);
  while (now - m.recent.front().first > std::chrono::duration<double>(kRecentSeconds)) m.recent.pop_front();
}

std::string Metrics::render(const std::function<size_t(const std::string&)>& queue_depth, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = "# HELP attn_serve_requests_total Requests answered, by route and HTTP status.\n"
                    "# TYPE attn_serve_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += "attn_serve_requests_total{route=\"" + key.first + "\",code=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  out += "# HELP attn_serve_request_seconds Time to answer a request (from its body read to its answer made).\n# TYPE attn_serve_request_seconds histogram\n";
  out += latency_.render("attn_serve_request_seconds", "");
  const std::vector<std::pair<std::string, std::string>> families = {
      {"queue_sentences", "gauge"}, {"batch_sentences", "histogram"}, {"sentences_total", "counter"},
      {"tokens_total", "counter"}, {"compute_seconds_total", "counter"}, {"tokens_per_second", "gauge"},
      {"cancelled_requests_total", "counter"}, {"cancelled_sentences_total", "counter"}};
  for (const auto& [family, type] : families) {
    out += "# TYPE attn_serve_" + family + " " + type + "\n";
    for (auto& [name, m] : models_) {
      const std::string labels = "model=\"" + name + "\"", metric = "attn_serve_" + family;
      while (!m.recent.empty() && now - m.recent.front().first > std::chrono::duration<double>(kRecentSeconds))
        m.recent.pop_front();
      double recent = 0;
      for (const auto& r : m.recent) recent += static_cast<double>(r.second);
      if (family == "batch_sentences") out += m.batch_sentences.render(metric, labels);
      else if (family == "queue_sentences") out += metric + "{" + labels + "} " + std::to_string(queue_depth(name)) + "\n";
      else out += metric + "{" + labels + "} " + number(family == "sentences_total" ? m.sentences
                                                          : family == "tokens_total" ? m.tokens
                                                          : family == "compute_seconds_total" ? m.seconds
                                                          : family == "cancelled_requests_total" ? m.cancelled_requests
                                                          : family == "cancelled_sentences_total" ? m.cancelled_sentences
                                                                                              : recent / kRecentSeconds) + "\n";
    }
  }
  const StorageCacheStats t = storage_cache_stats();
  out += "# HELP attn_serve_tensor_bytes Tensor memory: live now, the most ever live, and freed blocks kept for reuse.\n"
         "# TYPE attn_serve_tensor_bytes gauge\n";
  out += "attn_serve_tensor_bytes{kind=\"live\"} " + number(static_cast<double>(t.live)) + "\n";
  out += "attn_serve_tensor_bytes{kind=\"peak\"} " + number(static_cast<double>(t.peak_live)) + "\n";
  out += "attn_serve_tensor_bytes{kind=\"cached\"} " + number(static_cast<double>(t.cached)) + "\n";
  // glibc's heap (mallinfo2): blocks in use, freed blocks it keeps, and large blocks it mapped.
  const struct mallinfo2 h = mallinfo2();
  out += "# HELP attn_serve_heap_bytes The C heap: in use, free but kept, mapped for large blocks.\n"
         "# TYPE attn_serve_heap_bytes gauge\n";
  out += "attn_serve_heap_bytes{kind=\"in_use\"} " + number(static_cast<double>(h.uordblks + h.hblkhd)) + "\n";
  out += "attn_serve_heap_bytes{kind=\"free\"} " + number(static_cast<double>(h.fordblks)) + "\n";
  out += "attn_serve_heap_bytes{kind=\"mapped\"} " + number(static_cast<double>(h.hblkhd)) + "\n";
  out += "attn_serve_heap_bytes{kind=\"arena\"} " + number(static_cast<double>(h.arena)) + "\n";
  return out;
}

}  // namespace attn::serve
