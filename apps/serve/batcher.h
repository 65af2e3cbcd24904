// Dynamic batching across requests (as Triton's dynamic batcher): one thread per model takes the
// oldest queued job, waits up to max_wait for more of the same key (the same kind of work and
// options) until they are a full batch, and computes them as one batch. A batch is full at
// max_batch_tokens source tokens, or at as many sentences as the clients in play are expected to
// send: the previous batch's sentences, or those that queued while it computed if more (each
// client of a steady load sends its next request when answered, some before the batch is done
// with its last job), at most max_batch_sentences. The wait is
// counted from the oldest job's arrival or from the end of the previous batch, whichever is
// later, so the clients a batch has just answered can join the next one (at 32 clients without
// this, batches alternated between ~22 sentences and the ~10 that queued meanwhile), while a lone
// client's request is taken at once. With batching off, each job (one request) is computed alone,
// in arrival order: the one-at-a-time server the benchmark compares against.
//
// `batchers` threads compute batches of one model at once (the model is read-only): one forms the
// next batch while the others compute theirs. On a small machine, two batches computed side by
// side on one thread each beat one batch on two threads, whose every product waits for both
// (measured on 2 loaded cores: attn translate --threads 1 took half the CPU time of --threads 2).
//
// Continuous batching (given a Stream factory, for the work a Stream accepts: translations on a
// Transformer, compute.h): each batcher thread keeps a stream that jobs join between its steps
// and leave when their sentences are done, answered at once; between two steps the thread takes
// the queued jobs its stream accepts (oldest first, up to max_batch_sentences and
// max_batch_tokens in the stream, the least loaded thread first), so the batch stays full while
// clients come and go and no job waits for a batch to end. A job the stream does not accept goes
// to the batches above once the thread's stream is empty.
//
// A cancelled job (job.h: its request timed out or its client left) is dropped from the queue
// before it computes, and from a stream at its next step, its rows with it: the thread is free
// for the next jobs within one step. The stats count what was dropped (/metrics).
//
// The queue is bounded in sentences: submit() refuses a job that would pass max_queue (the HTTP
// layer answers 503 with Retry-After). stop() computes every job already queued, then returns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "job.h"

namespace attn::serve {

struct BatchLimits {
  size_t max_batch_tokens = 4096;  // source tokens of one batch (a single larger job still goes alone)
  int max_wait_ms = 5;             // longest a job waits for others to join its batch
  size_t max_queue = 1024;         // sentences queued, not yet computing
  bool batching = true;            // false: one job at a time
  size_t max_batch_sentences = 32;  // sentences of one batch (as attn translate --batch; a larger job goes alone)
  int batchers = 1;                 // threads computing batches at once (1 with batching off)
};

struct BatchStats {
  size_t jobs = 0, sentences = 0, tokens = 0;  // computed (a stream's step: finished)
  double seconds = 0;  // computing
  size_t together = 0;  // a stream's step: the sentences decoded together (0: a batch, `sentences`)
  size_t cancelled_jobs = 0, cancelled_sentences = 0;  // dropped unfinished (job.h: cancelled)
};

// A continuous batch: jobs join it between its steps.
class Stream {
 public:
  virtual ~Stream() = default;
  // Whether the job may join now (its kind of work; while the stream holds jobs, their options).
  virtual bool accepts(const Job& job) const = 0;
  virtual void add(std::shared_ptr<Job> job) = 0;
  // One step of every sentence in the stream; finishes the jobs whose sentences are all done.
  // The cancelled jobs leave first, unanswered, counted in the stats.
  virtual BatchStats step() = 0;
  // Finishes every job in the stream with `o` and empties it (a step failed).
  virtual void fail(const Outcome& o) = 0;
  virtual size_t sentences() const = 0;  // in the stream, not finished (0: idle)
  virtual size_t tokens() const = 0;     // their source tokens
};

class Batcher {
 public:
  // run computes a batch and finishes each of its jobs; an exception it throws finishes the
  // jobs left unanswered with a 500. setup runs first on the batcher's thread (threads, denormals);
  // on_batch is told of each batch computed; on_idle runs on a thread that has worked and then
  // found nothing to do for kIdleAfter (the server hands freed memory back to the system there).
  using Run = std::function<void(const std::vector<std::shared_ptr<Job>>&)>;
  // make_stream (may be empty): each thread's continuous batch, when batching is on.
  using MakeStream = std::function<std::unique_ptr<Stream>()>;
  Batcher(BatchLimits limits, Run run, std::function<void()> setup = {},
          std::function<void(const BatchStats&)> on_batch = {}, MakeStream make_stream = {},
          std::function<void()> on_idle = {});
  ~Batcher();
  static constexpr std::chrono::milliseconds kIdleAfter{200};
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues the job; false when the queue has no room for its sentences.
  bool submit(std::shared_ptr<Job> job);
  size_t queued_sentences() const;
  // Computes what is queued, then ends the thread. Idempotent.
  void stop();

 private:
  void loop(size_t thread);
  std::vector<std::shared_ptr<Job>> take_batch(std::unique_lock<std::mutex>& lock);
  void compute(const std::vector<std::shared_ptr<Job>>& batch);
  // Takes the cancelled jobs out of the queue (under the lock), counted in cancelled_.
  void drop_cancelled();
  // Moves the queued jobs `stream` accepts into it (under the lock), oldest first.
  void join(Stream& stream, size_t thread);
  void step(Stream& stream);
  // Waits (under the lock) until there is work or the batcher stops; runs on_idle once when a
  // thread that has worked (`worked`, then cleared) waits kIdleAfter without any.
  void wait_for_work(std::unique_lock<std::mutex>& lock, bool& worked);

  const BatchLimits limits_;
  const Run run_;
  const std::function<void()> setup_;
  const std::function<void(const BatchStats&)> on_batch_;
  const MakeStream make_stream_;
  const std::function<void()> on_idle_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> queue_;
  size_t queued_ = 0;  // sentences in queue_
  Clock::time_point last_end_{};  // when the previous batch was computed
  size_t expected_ = 0;            // sentences the next batch waits for (0: max_batch_sentences)
  BatchStats cancelled_;           // dropped from the queue, not reported yet
  bool stopping_ = false;
  bool forming_ = false;  // a thread is forming a batch (the others wait their turn)
  std::vector<size_t> load_;  // sentences in each thread's stream
  std::vector<std::thread> threads_;
};

}  // namespace attn::serve
