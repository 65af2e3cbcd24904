// Batcher: the token budget, every example once per epoch, seeded and deterministic epochs,
// exact resume from a saved state, the padding/bos/eos layout, evaluation batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "attn/data/batcher.h"
#include "data_test_util.h"

namespace attn::data {
namespace {

using namespace testing;

std::vector<int32_t> ints(const Tensor& t) {
  const int32_t* p = t.data<int32_t>();
  return std::vector<int32_t>(p, p + t.numel());
}

// Everything a batch holds, to compare two batches exactly.
void expect_same(const Batch& a, const Batch& b) {
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.src.shape(), b.src.shape());
  EXPECT_EQ(ints(a.src), ints(b.src));
  EXPECT_EQ(ints(a.tgt_in), ints(b.tgt_in));
  EXPECT_EQ(ints(a.tgt_out), ints(b.tgt_out));
  EXPECT_EQ(a.src_tokens, b.src_tokens);
  EXPECT_EQ(a.tgt_tokens, b.tgt_tokens);
}

TEST(Batch, PaddingBosEosLayout) {
  std::vector<Example> ex = {{{5, 6, 7}, {8, 9}, 0}, {{10}, {11, 12, 13}, 1}};
  Batch b = make_batch(ex, {0, 1});
  ASSERT_EQ(b.src.dtype(), DType::i32);
  EXPECT_EQ(b.src.shape(), (Shape{2, 4}));
  EXPECT_EQ(b.tgt_in.shape(), (Shape{2, 4}));
  EXPECT_EQ(b.tgt_out.shape(), (Shape{2, 4}));
  EXPECT_EQ(ints(b.src), (std::vector<int32_t>{5, 6, 7, 2, /**/ 10, 2, 0, 0}));
  EXPECT_EQ(ints(b.tgt_in), (std::vector<int32_t>{1, 8, 9, 0, /**/ 1, 11, 12, 13}));
  EXPECT_EQ(ints(b.tgt_out), (std::vector<int32_t>{8, 9, 2, 0, /**/ 11, 12, 13, 2}));
  EXPECT_EQ(b.src_tokens, 6);  // 3 + eos, 1 + eos
  EXPECT_EQ(b.tgt_tokens, 7);  // 2 + eos, 3 + eos
  EXPECT_EQ(b.indices, (std::vector<int64_t>{0, 1}));
  // Rows follow the order of the indices.
  Batch r = make_batch(ex, {1, 0});
  EXPECT_EQ(ints(r.src), (std::vector<int32_t>{10, 2, 0, 0, /**/ 5, 6, 7, 2}));
  // An empty source is just eos.
  std::vector<Example> empty = {{{}, {4}, 0}};
  EXPECT_EQ(ints(make_batch(empty, {0}).src), (std::vector<int32_t>{2}));
}

TEST(Batcher, EveryBatchWithinBudgetAndEveryExampleOncePerEpoch) {
  auto ex = random_examples(3000, 60, 7);
  for (int64_t max_tokens : {64, 500, 2048}) {
    for (int64_t max_sentences : {0, 8}) {
      Batcher batcher(ex, {max_tokens, max_sentences, 3, 0});
      EXPECT_GT(batcher.options().bucket_window, 0);
      for (int64_t epoch = 0; epoch < 3; ++epoch) {
        ASSERT_EQ(batcher.state().epoch, epoch);
        ASSERT_EQ(batcher.state().batch_in_epoch, 0);
        const int64_t n = batcher.batches_in_epoch();
        std::vector<int> seen(ex.size(), 0);
        int64_t real_tgt = 0, padded_tgt = 0;
        for (int64_t i = 0; i < n; ++i) {
          Batch b = batcher.next();
          const int64_t B = b.size(), S = b.src.size(1), T = b.tgt_out.size(1);
          ASSERT_EQ(b.src.size(0), B);
          ASSERT_LE(B * S, max_tokens) << "source side over budget";
          ASSERT_LE(B * T, max_tokens) << "target side over budget";
          if (max_sentences > 0) {
            ASSERT_LE(B, max_sentences);
          }
          for (int64_t idx : b.indices) ++seen[idx];
          real_tgt += b.tgt_tokens, padded_tgt += B * T;
        }
        for (size_t k = 0; k < seen.size(); ++k) ASSERT_EQ(seen[k], 1) << "example " << k;
        if (epoch == 0)
          std::printf("max_tokens %ld max_sentences %ld: %ld batches, target fill %.3f\n",
                      max_tokens, max_sentences, n, double(real_tgt) / padded_tgt);
      }
    }
  }
}

std::vector<std::vector<int64_t>> first_indices(Batcher& b, int64_t count) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(b.next().indices);
  return out;
}

TEST(Batcher, SameSeedSameBatchesOtherSeedOthers) {
  auto ex = random_examples(2000, 40, 11);
  Batcher a(ex, {512, 0, 5, 0}), b(ex, {512, 0, 5, 0}), c(ex, {512, 0, 6, 0});
  const int64_t count = a.batches_in_epoch() * 2 + 3;  // into the third epoch
  auto ia = first_indices(a, count), ib = first_indices(b, count), ic = first_indices(c, count);
  EXPECT_EQ(ia, ib);
  EXPECT_NE(ia, ic);
  // The epochs differ from each other too.
  const int64_t n0 = Batcher(ex, {512, 0, 5, 0}).batches_in_epoch();
  EXPECT_NE(std::vector(ia.begin(), ia.begin() + 3), std::vector(ia.begin() + n0, ia.begin() + n0 + 3));
  // Batches are shuffled: the first ten are not in order of length.
  std::vector<int64_t> widths;
  Batcher d(ex, {512, 0, 5, 0});
  for (int i = 0; i < 10; ++i) widths.push_back(d.next().src.size(1));
  EXPECT_FALSE(std::is_sorted(widths.begin(), widths.end()));
}

// A batcher restored from a saved state yields exactly what the one that never stopped yields,
// from the start, mid-epoch, at the very end of an epoch and in a later epoch.
TEST(Batcher, RestoreContinuesExactly) {
  auto ex = random_examples(1500, 50, 3);
  const BatchOptions options{400, 0, 9, 0};
  Batcher probe(ex, options);
  const int64_t n0 = probe.batches_in_epoch();
  for (int64_t stop : {int64_t{0}, n0 / 2, n0, n0 + 7}) {
    Batcher runner(ex, options);
    for (int64_t i = 0; i < stop; ++i) runner.next();
    const BatcherState saved = runner.state();
    Batcher resumed(ex, options);
    resumed.next();  // wherever it was, restore() moves it
    resumed.restore(saved);
    EXPECT_EQ(resumed.state().epoch, saved.epoch);
    EXPECT_EQ(resumed.state().batch_in_epoch, saved.batch_in_epoch);
    for (int64_t i = 0; i < n0 + 5; ++i) {
      SCOPED_TRACE("stop " + std::to_string(stop) + ", batch " + std::to_string(i));
      expect_same(runner.next(), resumed.next());
    }
    EXPECT_EQ(runner.state().epoch, resumed.state().epoch);
    EXPECT_EQ(runner.state().batch_in_epoch, resumed.state().batch_in_epoch);
  }
  // plan_epoch is what the batcher follows.
  Batcher again(ex, options);
  auto plan1 = plan_epoch(ex, again.options(), 1);
  again.restore({1, 0, 0});
  for (const auto& indices : plan1) EXPECT_EQ(again.next().indices, indices);
}

TEST(Batcher, Errors) {
  auto ex = random_examples(100, 30, 1);
  Batcher a(ex, {256, 0, 1, 0});
  Batcher other_seed(ex, {256, 0, 2, 0});
  expect_error([&] { other_seed.restore(a.state()); }, {"another corpus or other batch options"});
  expect_error([&] { a.restore({0, 100000, 0}); }, {"state batch 100000", "epoch 0"});
  expect_error([] { Batcher({}, {}); }, {"no examples"});
  std::vector<Example> too_long = {{std::vector<int32_t>(300, 5), {6}, 41}};
  expect_error([&] { Batcher(too_long, {256, 0, 1, 0}); },
               {"line 42", "301 source", "max_tokens 256"});
}

TEST(BatchesInOrder, CoverEverythingLongestFirst) {
  auto ex = random_examples(700, 40, 5);
  auto batches = batches_in_order(ex, 300);
  std::vector<int> seen(ex.size(), 0);
  int64_t prev = INT64_MAX;
  for (const Batch& b : batches) {
    ASSERT_LE(b.size() * b.src.size(1), 300);
    ASSERT_LE(b.size() * b.tgt_out.size(1), 300);
    for (int64_t r = 0; r < b.size(); ++r) {
      const Example& e = ex[b.indices[r]];
      const auto longer = static_cast<int64_t>(std::max(e.src.size(), e.tgt.size()));
      ASSERT_LE(longer, prev) << "not longest first";
      prev = longer;
      ++seen[b.indices[r]];
      // Row r holds that example.
      for (size_t k = 0; k < e.src.size(); ++k) ASSERT_EQ(b.src.at({r, int64_t(k)}), e.src[k]);
    }
  }
  for (int s : seen) ASSERT_EQ(s, 1);

  // Source only (translation): targets undefined, empty lines are eos alone, order restorable.
  std::vector<std::vector<int32_t>> src = {{7, 8, 9}, {}, {10}, {11, 12, 13, 14, 15}};
  auto only = batches_in_order(src, 8, 2);
  std::vector<std::vector<int32_t>> back(src.size());
  for (const Batch& b : only) {
    EXPECT_FALSE(b.tgt_in.defined());
    EXPECT_EQ(b.tgt_tokens, 0);
    EXPECT_LE(b.size(), 2);
    const int64_t S = b.src.size(1);
    for (int64_t r = 0; r < b.size(); ++r) {
      auto row = ints(b.src.select(0, r).contiguous());
      row.resize(std::find(row.begin(), row.end(), kEosId) - row.begin());
      back[b.indices[r]] = row;
      EXPECT_LE(static_cast<int64_t>(row.size()) + 1, S);
    }
  }
  EXPECT_EQ(back, src);
  EXPECT_EQ(ints(only[0].src), (std::vector<int32_t>{11, 12, 13, 14, 15, 2}));  // alone: 2*6 > 8
}

}  // namespace
}  // namespace attn::data
