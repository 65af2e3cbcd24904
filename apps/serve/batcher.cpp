#include "batcher.h"

#include <algorithm>
#include <exception>

#include "attn/error.h"

namespace attn::serve {

Batcher::Batcher(BatchLimits limits, Run run, std::function<void()> setup,
                 std::function<void(const BatchStats&)> on_batch, MakeStream make_stream,
                 std::function<void()> on_idle)
    : limits_(limits),
      run_(std::move(run)),
      setup_(std::move(setup)),
      on_batch_(std::move(on_batch)),
      make_stream_(limits.batching ? std::move(make_stream) : MakeStream{}),
      on_idle_(std::move(on_idle)) {
  const size_t n = limits_.batching ? static_cast<size_t>(std::max(1, limits_.batchers)) : 1;
  load_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
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

void Batcher::wait_for_work(std::unique_lock<std::mutex>& lock, bool& worked) {
  const auto ready = [&] { return !forming_ && (stopping_ || !queue_.empty()); };
  if (worked && on_idle_ && !changed_.wait_for(lock, kIdleAfter, ready)) {
    worked = false;
    lock.unlock();
    on_idle_();
    lock.lock();
  }
  changed_.wait(lock, ready);
}

void Batcher::loop(size_t thread) {
  if (setup_) setup_();
  const std::unique_ptr<Stream> stream = make_stream_ ? make_stream_() : nullptr;
  std::unique_lock<std::mutex> lock(mutex_);
  bool worked = false;
  for (;;) {
    if (!stream || stream->sentences() == 0) {
      wait_for_work(lock, worked);
      if (queue_.empty()) return;  // stopping, and everything queued is taken
    }
    worked = true;
    drop_cancelled();
    if (cancelled_.cancelled_jobs > 0) {
      const BatchStats dropped = cancelled_;
      cancelled_ = {};
      lock.unlock();
      if (on_batch_) on_batch_(dropped);
      lock.lock();
      continue;
    }
    if (stream) join(*stream, thread);
    if (stream && stream->sentences() > 0) {
      load_[thread] = stream->sentences();
      lock.unlock();
      step(*stream);
      lock.lock();
      load_[thread] = stream->sentences();
      continue;
    }
    if (queue_.empty()) continue;
    forming_ = true;
    std::vector<std::shared_ptr<Job>> batch = take_batch(lock);
    forming_ = false;
    changed_.notify_all();  // the next thread may form the next batch
    if (batch.empty()) continue;
    lock.unlock();
    compute(batch);
    lock.lock();
    last_end_ = Clock::now();
    // The clients just answered send again, some of them already (queued meanwhile, with others)
    size_t answered = 0;
    for (const auto& j : batch) answered += j->sentences;
    expected_ = std::max(queued_, answered);
  }
}

void Batcher::drop_cancelled() {
  for (auto it = queue_.begin(); it != queue_.end();) {
    Job& j = **it;
    if (!j.cancelled) {
      ++it;
      continue;
    }
    queued_ -= j.sentences;
    ++cancelled_.cancelled_jobs;
    cancelled_.cancelled_sentences += j.sentences;
    it = queue_.erase(it);
  }
}

void Batcher::join(Stream& stream, size_t thread) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    Job& j = **it;
    if (j.cancelled) {
      ++it;  // dropped by the next drop_cancelled()
      continue;
    }
    // it goes first once the stream takes it; a job of more sentences than a batch joins an empty
    // stream alone and flows through it at the batch's size (TranslationStream's max_decoding)
    if (!stream.accepts(j)) return;
    const size_t sentences = stream.sentences();
    if (sentences > 0) {
      const bool room = sentences + j.sentences <= limits_.max_batch_sentences &&
                        stream.tokens() + j.tokens <= limits_.max_batch_tokens;
      const bool least = std::all_of(load_.begin(), load_.end(), [&](size_t l) { return sentences <= l; });
      if (!room || !least) return;
    }
    queued_ -= j.sentences;
    stream.add(*it);
    load_[thread] = stream.sentences();
    it = queue_.erase(it);
  }
}

void Batcher::step(Stream& stream) {
  BatchStats stats;
  const Clock::time_point start = Clock::now();
  try {
    stats = stream.step();
  } catch (const std::bad_alloc&) {
    stream.fail({500, {{"error", "out of memory computing the batch"}}, ""});
  } catch (const std::exception& e) {
    stream.fail({500, {{"error", e.what()}}, ""});
  }
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (on_batch_) on_batch_(stats);
}

std::vector<std::shared_ptr<Job>> Batcher::take_batch(std::unique_lock<std::mutex>& lock) {
  const std::string key = queue_.front()->key;
  auto full = [&] {
    size_t tokens = 0, sentences = 0;
    for (const auto& j : queue_)
      if (j->key == key && !j->cancelled) {
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
    if (!j.cancelled && !fits) {
      ++it;
      continue;
    }
    queued_ -= j.sentences;
    if (!j.cancelled) {
      tokens += j.tokens;
      sentences += j.sentences;
      batch.push_back(*it);
    } else {
      ++cancelled_.cancelled_jobs;
      cancelled_.cancelled_sentences += j.sentences;
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
  try {
    run_(batch);
  } catch (...) {
    const std::exception_ptr e = std::current_exception();
    // A failure is confined to the request that caused it: with others in the batch, each job
    // not yet answered is computed again alone, so only the one that fails alone gets its error.
    for (const auto& j : batch) {
      if (j->answered()) continue;
      if (batch.size() == 1) {
        j->finish(failure(e));
        continue;
      }
      try {
        run_({j});
      } catch (...) {
        j->finish(failure(std::current_exception()));
      }
    }
  }
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (on_batch_) on_batch_(stats);
}

}  // namespace attn::serve
