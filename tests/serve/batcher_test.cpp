// The dynamic batcher (apps/serve/batcher.h) with a run function that records its batches: jobs
// of one key queued together share a batch up to the token limit, other keys wait for their own,
// the queue refuses what passes its bound, an abandoned job is dropped, a failing batch answers
// each of its jobs 500, and stop() computes what is queued before returning.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "batcher.h"

namespace attn::serve {
namespace {

std::shared_ptr<Job> job(const std::string& key, size_t tokens, size_t sentences = 1) {
  auto j = std::make_shared<Job>();
  j->key = key;
  j->tokens = tokens;
  j->sentences = sentences;
  j->work = ClassifyWork{};
  return j;
}

struct Recorder {
  std::mutex mutex;
  std::vector<std::vector<std::string>> batches;  // keys of each batch's jobs
  std::atomic<int> gate{1};                        // 0: the run function waits (to fill the queue)

  Batcher::Run run() {
    return [this](const std::vector<std::shared_ptr<Job>>& b) {
      while (gate == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::vector<std::string> keys;
      for (const auto& j : b) {
        keys.push_back(j->key);
        j->finish({200, {{"batch", b.size()}}, ""});
      }
      std::lock_guard<std::mutex> lock(mutex);
      batches.push_back(keys);
    };
  }
};

TEST(DynamicBatcher, JobsOfOneKeyShareABatchUpToTheTokenLimit) {
  Recorder rec;
  rec.gate = 0;  // the first job blocks the batcher while the others queue
  Batcher b({/*max_batch_tokens=*/100, /*max_wait_ms=*/50, /*max_queue=*/1000, true}, rec.run());
  auto first = job("a", 10);
  ASSERT_TRUE(b.submit(first));
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // first taken alone, now blocked
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(job(i % 2 ? "b" : "a", 30));  // a a a (90) | b b b (90)
  for (auto& j : jobs) ASSERT_TRUE(b.submit(j));
  rec.gate = 1;
  for (auto& j : jobs) EXPECT_EQ(j->future().get().status, 200);
  b.stop();
  ASSERT_EQ(rec.batches.size(), 3u);
  EXPECT_EQ(rec.batches[0], std::vector<std::string>{"a"});
  EXPECT_EQ(rec.batches[1], (std::vector<std::string>{"a", "a", "a"}));
  EXPECT_EQ(rec.batches[2], (std::vector<std::string>{"b", "b", "b"}));
}

TEST(DynamicBatcher, TheTokenLimitSplitsABatch) {
  Recorder rec;
  rec.gate = 0;
  Batcher b({100, 50, 1000, true}, rec.run());
  ASSERT_TRUE(b.submit(job("x", 1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(job("a", 40));  // 40+40 | 40+40 | 40
  for (auto& j : jobs) ASSERT_TRUE(b.submit(j));
  rec.gate = 1;
  b.stop();
  ASSERT_EQ(rec.batches.size(), 4u);
  EXPECT_EQ(rec.batches[1].size(), 2u);
  EXPECT_EQ(rec.batches[2].size(), 2u);
  EXPECT_EQ(rec.batches[3].size(), 1u);
}

TEST(DynamicBatcher, WithoutBatchingEachJobIsAlone) {
  Recorder rec;
  rec.gate = 0;
  Batcher b({4096, 50, 1000, false}, rec.run());
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(job("a", 5));
  for (auto& j : jobs) ASSERT_TRUE(b.submit(j));
  rec.gate = 1;
  b.stop();
  ASSERT_EQ(rec.batches.size(), 4u);
  for (const auto& batch : rec.batches) EXPECT_EQ(batch.size(), 1u);
}

TEST(DynamicBatcher, AFullQueueRefusesAndAnAbandonedJobIsDropped) {
  Recorder rec;
  rec.gate = 0;
  Batcher b({4096, 0, 5, true}, rec.run());
  ASSERT_TRUE(b.submit(job("busy", 1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // taken; the queue is empty again
  auto dropped = job("a", 1, 2), kept = job("a", 1, 3);
  ASSERT_TRUE(b.submit(dropped));
  ASSERT_TRUE(b.submit(kept));
  EXPECT_EQ(b.queued_sentences(), 5u);
  EXPECT_FALSE(b.submit(job("a", 1, 1))) << "a sixth sentence passed a queue of 5";
  dropped->cancelled = true;
  rec.gate = 1;
  EXPECT_EQ(kept->future().get().status, 200);
  b.stop();
  ASSERT_EQ(rec.batches.size(), 2u);
  EXPECT_EQ(rec.batches[1], std::vector<std::string>{"a"});
  EXPECT_EQ(b.queued_sentences(), 0u);
}

TEST(DynamicBatcher, AFailingBatchAnswersEachJob500AndTheBatcherGoesOn) {
  int calls = 0;
  Batcher b({4096, 0, 100, true}, [&](const std::vector<std::shared_ptr<Job>>& batch) {
    if (calls++ == 0) throw std::runtime_error("boom");
    for (const auto& j : batch) j->finish({200, nullptr, ""});
  });
  auto bad = job("a", 1), good = job("a", 1);
  ASSERT_TRUE(b.submit(bad));
  Outcome o = bad->future().get();
  EXPECT_EQ(o.status, 500);
  EXPECT_EQ(o.json["error"], "boom");
  ASSERT_TRUE(b.submit(good));
  EXPECT_EQ(good->future().get().status, 200);
}

// issue 50: one bad request failed every request batched with it (each got a 500 with the bad
// one's error). Now a failing batch computes each unanswered job again alone: the good ones are
// answered, the bad one alone gets its error (a library check on its values: 400).
TEST(DynamicBatcher, AFailureIsConfinedToTheJobThatCausesIt) {
  std::shared_ptr<Job> bad = job("a", 1);
  std::vector<size_t> sizes;
  // Full at 4 sentences, else waiting 10 s: the four jobs are one batch.
  Batcher b({4096, 10000, 100, true, 4}, [&](const std::vector<std::shared_ptr<Job>>& batch) {
    sizes.push_back(batch.size());
    for (const auto& j : batch)
      if (j == bad) throw Error("\"alignment_layer\" 99 is more than the model's 2 layers");
    for (const auto& j : batch) j->finish({200, nullptr, ""});
  });
  std::vector<std::shared_ptr<Job>> good;
  for (int i = 0; i < 3; ++i) good.push_back(job("a", 1));
  ASSERT_TRUE(b.submit(good[0]));
  ASSERT_TRUE(b.submit(bad));
  ASSERT_TRUE(b.submit(good[1]));
  ASSERT_TRUE(b.submit(good[2]));
  for (auto& g : good) EXPECT_EQ(g->future().get().status, 200);
  const Outcome o = bad->future().get();
  EXPECT_EQ(o.status, 400);
  EXPECT_NE(o.json["error"].get<std::string>().find("alignment_layer"), std::string::npos) << o.json;
  b.stop();
  // the batch of four, then each job alone
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 1, 1, 1, 1}));
}

TEST(DynamicBatcher, StopComputesWhatIsQueuedThenRefuses) {
  Recorder rec;
  rec.gate = 0;
  auto b = std::make_unique<Batcher>(BatchLimits{4096, 0, 100, false}, rec.run());
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(job("a", 1));
  for (auto& j : jobs) ASSERT_TRUE(b->submit(j));
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    rec.gate = 1;
  });
  b->stop();
  release.join();
  for (auto& j : jobs) EXPECT_EQ(j->future().wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_FALSE(b->submit(job("a", 1)));
}

TEST(DynamicBatcher, TheWaitIsBoundedByMaxWait) {
  Recorder rec;
  Batcher b({1 << 20, 30, 100, true}, rec.run());
  const auto start = Clock::now();
  auto j = job("a", 1);
  ASSERT_TRUE(b.submit(j));
  j->future().get();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  EXPECT_GE(ms, 25) << "the job did not wait for others";
  EXPECT_LT(ms, 1000) << "the job waited far past --max-wait-ms";
}

// Jobs that each make a full batch (max_batch_sentences 1), each batch taking 50 ms: two batchers
// compute two at once; with batching off there is one, whatever `batchers` says.
int most_at_once(bool batching) {
  std::atomic<int> running{0}, most{0};
  BatchLimits limits{100, 0, 1000, batching};
  limits.max_batch_sentences = 1;
  limits.batchers = 2;
  Batcher b(limits, [&](const std::vector<std::shared_ptr<Job>>& batch) {
    const int now = ++running;
    for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    --running;
    for (const auto& j : batch) j->finish({200, nullptr, ""});
  });
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(job("a", 1));
  for (auto& j : jobs) EXPECT_TRUE(b.submit(j));
  for (auto& j : jobs) EXPECT_EQ(j->future().get().status, 200);
  return most;
}

TEST(DynamicBatcher, TwoBatchersComputeTwoBatchesAtOnceButNotWithoutBatching) {
  EXPECT_EQ(most_at_once(true), 2);
  EXPECT_EQ(most_at_once(false), 1);
}

// The batch waits for as many sentences as the previous batch answered plus those queued
// meanwhile: after a batch of 3, the next is taken once 3 are queued, long before max_wait.
TEST(DynamicBatcher, ABatchIsFullAtTheSentencesTheLastOneAnswered) {
  Recorder rec;
  Batcher b({1000, 2000, 1000, true}, rec.run());
  std::vector<std::shared_ptr<Job>> first;
  for (int i = 0; i < 3; ++i) first.push_back(job("a", 1));
  for (auto& j : first) ASSERT_TRUE(b.submit(j));
  for (auto& j : first) j->future().get();  // the first batch waited the whole 2 s for 32 sentences
  std::vector<std::shared_ptr<Job>> next;
  for (int i = 0; i < 3; ++i) next.push_back(job("a", 1));
  const auto start = std::chrono::steady_clock::now();
  for (auto& j : next) ASSERT_TRUE(b.submit(j));
  for (auto& j : next) j->future().get();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  b.stop();
  ASSERT_EQ(rec.batches.size(), 2u);
  EXPECT_EQ(rec.batches[1].size(), 3u);
  EXPECT_LT(ms, 1000) << "the second batch waited for more than the 3 sentences expected";
}

}  // namespace
}  // namespace attn::serve
