#include "batcher.h"

#include <algorithm>
#include <exception>

#include "attn/error.h"

namespace attn::serve {

Batcher::Batcher(BatchLimits limits, Run run, std::function<void()> setup,
                 std::function<void(const BatchStats&)> on_batch)
    : limits_(limits), run_(std::move(run)), setup_(std::move(setup)), on_batch_(std::move(on_batch)) {
  const int n = limits_.batching ? std::max(1, limits_.batchers) : 1;
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { loop(); });
}

Batcher::~Batcher() { stop(); }

bool Batcher::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || queued_ + job->sentences > limits_.max_queue) return false;
    job->queued = Clock::now();
    queued_ += job->sentences;
    queue_.push_back(std::move(job));
  }
  changed_.notify_all();
  return true;
}

size_t Batcher::queued_sentences() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_;
}

void Batcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void Batcher::loop() {
  if (setup_) setup_();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !forming_ && (stopping_ || !queue_.empty()); });
    if (queue_.empty()) return;  // stopping, and everything queued is taken
    forming_ = true;
    std::vector<std::shared_ptr<Job>> batch = take_batch(lock);
    forming_ = false;
    changed_.notify_all();  // the next thread may form the next batch
    if (batch.empty()) continue;
    lock.unlock();
    compute(batch);
    lock.lock();
    last_end_ = Clock::now();
    expected_ = queued_;  // what queued meanwhile, and (below) the sentences just answered
    for (const auto& j : batch) expected_ += j->sentences;
  }
}

std::vector<std::shared_ptr<Job>> Batcher::take_batch(std::unique_lock<std::mutex>& lock) {
  const std::string key = queue_.front()->key;
  auto full = [&] {
    size_t tokens = 0, sentences = 0;
    for (const auto& j : queue_)
      if (j->key == key && !j->abandoned) {
        tokens += j->tokens;
        sentences += j->sentences;
      }
    const size_t target = expected_ > 0 ? std::min(expected_, limits_.max_batch_sentences) : limits_.max_batch_sentences;
    return tokens >= limits_.max_batch_tokens || sentences >= target;
  };
  // Only the forming thread takes jobs out, so the front job stays while it waits.
  if (limits_.batching)
    changed_.wait_until(lock, std::max(queue_.front()->queued, last_end_) + std::chrono::milliseconds(limits_.max_wait_ms),
                        [&] { return stopping_ || full(); });
  std::vector<std::shared_ptr<Job>> batch;
  size_t tokens = 0, sentences = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    Job& j = **it;
    const bool fits = batch.empty() || (limits_.batching && j.key == key && tokens + j.tokens <= limits_.max_batch_tokens &&
                                        sentences + j.sentences <= limits_.max_batch_sentences);
    if (!j.abandoned && !fits) {
      ++it;
      continue;
    }
    queued_ -= j.sentences;
    if (!j.abandoned) {
      tokens += j.tokens;
      sentences += j.sentences;
      batch.push_back(*it);
    }
    it = queue_.erase(it);
    if (!limits_.batching && !batch.empty()) break;
  }
  return batch;
}

void Batcher::compute(const std::vector<std::shared_ptr<Job>>& batch) {
  BatchStats stats;
  stats.jobs = batch.size();
  for (const auto& j : batch) {
    stats.sentences += j->sentences;
    stats.tokens += j->tokens;
  }
  const Clock::time_point start = Clock::now();
  Outcome failed{500, {{"error", "internal error"}}, ""};
  try {
    run_(batch);
  } catch (const std::bad_alloc&) {
    failed.json["error"] = "out of memory computing the batch";
  } catch (const std::exception& e) {
    failed.json["error"] = e.what();
  }
  for (const auto& j : batch) j->finish(failed);  // no-op for the jobs run_ answered
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (on_batch_) on_batch_(stats);
}

}  // namespace attn::serve
