// Precision belongs to the model: models of different precisions loaded in one process and
// searched from four threads at once give, each, exactly what they give alone (the server, the
// Python API and ensembles run several models, of several precisions, from many threads).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "attn/decode/search.h"
#include "attn/models/model_dir.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

using Outputs = std::vector<std::vector<Hypothesis>>;

Transformer fixture(const std::string& name, Precision p) {
  Transformer m = import_torch(std::string(ATTN_TEST_DATA) + "/transformer/" + name);
  prepare(m, p, Use::inference);
  return m;
}

std::vector<std::vector<int32_t>> random_sources(int64_t count, int64_t vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<int32_t>> out;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int32_t> s(static_cast<size_t>(3 + rng.below(14)));
    for (int32_t& t : s) t = 3 + static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab - 3)));
    out.push_back(s);
  }
  return out;
}

struct Job {
  const Transformer* model;
  SearchOptions options;
  std::vector<std::vector<int32_t>> sources;
  const char* name;
};

void expect_same(const Outputs& alone, const Outputs& together, const std::string& what) {
  ASSERT_EQ(alone.size(), together.size()) << what;
  for (size_t i = 0; i < alone.size(); ++i) {
    ASSERT_EQ(alone[i].size(), together[i].size()) << what << " sentence " << i;
    for (size_t j = 0; j < alone[i].size(); ++j) {
      EXPECT_EQ(alone[i][j].tokens, together[i][j].tokens) << what << " sentence " << i << " hypothesis " << j;
      EXPECT_EQ(alone[i][j].logprob, together[i][j].logprob) << what << " sentence " << i << " hypothesis " << j;
    }
  }
}

TEST(ConcurrentModels, EachGivesAloneWhatItGivesTogether) {
  // Two models of other weights and shapes; one of them also in a second precision, sharing its
  // f32 weights with the first.
  const Transformer a32 = fixture("post_shared_l2_h4", Precision::fp32);
  const Transformer a16 = fixture("post_shared_l2_h4", Precision::bf16);
  const Transformer b8 = fixture("pre_shared_l3_h2", Precision::int8);
  SearchOptions greedy, beam;
  greedy.max_len = beam.max_len = 16;
  beam.beam = 4;  // 8 sentences x 4 beams: 32-row decoding steps, which fp32 runs on the panels
  const std::vector<Job> jobs = {
      {&a32, beam, random_sources(8, a32.config.src_vocab, 1), "fp32 beam 4"},
      {&b8, beam, random_sources(8, b8.config.src_vocab, 2), "int8 beam 4"},
      {&a16, greedy, random_sources(8, a16.config.src_vocab, 3), "bf16 greedy"},
      {&b8, greedy, random_sources(8, b8.config.src_vocab, 4), "int8 greedy"},
  };
  // Alone, in turn, on this thread. The fp32 model's panels are made here by its first search;
  // a second set of models makes them under the concurrent load instead.
  std::vector<Outputs> alone;
  for (const Job& j : jobs) alone.push_back(search(*j.model, j.sources, j.options));
  const Transformer c32 = fixture("post_shared_l2_h4", Precision::fp32);
  std::vector<Job> fresh_jobs = jobs;
  fresh_jobs[0].model = &c32;
  const std::vector<Job>& fresh = fresh_jobs;

  for (const std::vector<Job>* set : {&jobs, &fresh}) {
    const int rounds = 2;
    std::vector<std::vector<Outputs>> together(set->size(), std::vector<Outputs>(rounds));
    std::vector<std::thread> threads;
    for (size_t t = 0; t < set->size(); ++t)
      threads.emplace_back([&, t] {
        const Job& j = (*set)[t];
        for (int r = 0; r < rounds; ++r) together[t][static_cast<size_t>(r)] = search(*j.model, j.sources, j.options);
      });
    for (std::thread& t : threads) t.join();
    for (size_t t = 0; t < set->size(); ++t)
      for (int r = 0; r < rounds; ++r)
        expect_same(alone[t], together[t][static_cast<size_t>(r)],
                    std::string((*set)[t].name) + (set == &fresh ? " (panels made under load)" : "") + ", round " +
                        std::to_string(r));
  }
  // The precisions differ where it shows: the same weights in fp32 and bf16 give other scores.
  const Outputs a16_beam = search(a16, jobs[0].sources, beam);
  bool differs = false;
  for (size_t i = 0; i < a16_beam.size(); ++i) differs = differs || a16_beam[i][0].logprob != alone[0][i][0].logprob;
  EXPECT_TRUE(differs) << "bf16 gave fp32's log-probabilities: was the precision applied?";
  std::printf("[concurrent models] 4 threads x 2 rounds, fp32 / bf16 / int8 models: outputs identical to alone\n");
}

}  // namespace
}  // namespace attn
