#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "attn/error.h"
#include "attn/tensor/random.h"
#include "attn/tensor/tensor.h"

namespace attn {
namespace {

Tensor iota(const Shape& s) {
  Tensor t = Tensor::empty(s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(Tensor, StorageIs64ByteAligned) {
  for (int n : {1, 3, 17, 1000}) {
    Tensor t = Tensor::empty({n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  }
}

TEST(Tensor, TransposeIsAViewAndContiguousCopies) {
  Tensor t = iota({2, 3});
  Tensor tt = t.transpose(0, 1);
  EXPECT_EQ(tt.storage(), t.storage());
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.at({2, 1}), 5.0f);
  Tensor c = tt.contiguous();
  EXPECT_NE(c.storage(), t.storage());
  EXPECT_EQ(c.to_vector(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

// A copy of 1 MB or more is split between the threads by rows of the innermost dimension: every
// element lands where the strides say, for a split of the heads ([B, S, h, d_k] -> [B, h, S, d_k])
// and for a transposed matrix (inner stride not 1), whatever the thread count.
TEST(Tensor, LargeContiguousCopiesMatchTheStrides) {
  const int previous = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    Tensor heads = iota({3, 37, 8, 64}).transpose(1, 2).contiguous();  // 2.3 MB
    ASSERT_EQ(heads.shape(), (Shape{3, 8, 37, 64}));
    const float* h = heads.data<float>();
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t j = 0; j < 8; ++j)
        for (int64_t s = 0; s < 37; ++s)
          for (int64_t c = 0; c < 64; ++c)
            ASSERT_EQ(h[((b * 8 + j) * 37 + s) * 64 + c], static_cast<float>(((b * 37 + s) * 8 + j) * 64 + c))
                << "threads " << threads;
    Tensor t = iota({700, 500}).transpose(0, 1).contiguous();  // 1.4 MB
    const float* tp = t.data<float>();
    for (int64_t i = 0; i < 500; ++i)
      for (int64_t j = 0; j < 700; ++j)
        ASSERT_EQ(tp[i * 700 + j], static_cast<float>(j * 500 + i)) << "threads " << threads;
  }
  omp_set_num_threads(previous);
}

TEST(Tensor, ReshapeOfContiguousSharesStorage) {
  Tensor t = iota({2, 3, 4});
  Tensor r = t.reshape({6, -1});
  EXPECT_EQ(r.storage(), t.storage());
  EXPECT_EQ(r.shape(), (Shape{6, 4}));
  Tensor nr = t.transpose(1, 2).reshape({2, 12});  // must copy
  EXPECT_NE(nr.storage(), t.storage());
  EXPECT_EQ(nr.at({0, 1}), 4.0f);
  EXPECT_THROW(t.reshape({5, 5}), Error);
}

TEST(Tensor, SliceSelectUnsqueeze) {
  Tensor t = iota({3, 4});
  Tensor s = t.slice(1, 1, 3);
  EXPECT_EQ(s.storage(), t.storage());
  EXPECT_EQ(s.to_vector(), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(t.select(0, 2).to_vector(), (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(t.unsqueeze(0).shape(), (Shape{1, 3, 4}));
  EXPECT_THROW(t.slice(0, 2, 5), Error);
  Tensor dst = Tensor::zeros({3, 2});
  dst.copy_from(s);
  EXPECT_EQ(dst.to_vector(), s.to_vector());
}

TEST(Tensor, DtypeChecked) {
  Tensor ids = Tensor::from_ids({1, 2, 3}, {3});
  EXPECT_THROW(ids.data<float>(), Error);
  EXPECT_EQ(ids.at({2}), 3.0f);
}

TEST(Random, CounterBasedStreamsAreReproducible) {
  Rng a(7), b(7);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.uniform(), b.uniform());
  EXPECT_EQ(random_uniform(7, 3), random_uniform(7, 3));
  EXPECT_NE(random_uniform(7, 3), random_uniform(8, 3));
  double mean = 0;
  for (int i = 0; i < 100000; ++i) mean += random_uniform(1, i);
  EXPECT_NEAR(mean / 100000, 0.5, 0.01);
}

// Dropout's stream (triple32 over the counter's low half): uniform over 16 buckets, no
// correlation between neighbours, other seeds give other numbers, and the counter's high half
// counts (streams 2^32 apart differ).
TEST(Random, DropoutStreamIsUniformAndUncorrelated) {
  const int n = 1 << 20;
  std::vector<int> buckets(16, 0);
  double sum_xy = 0, sum_x = 0, sum_xx = 0;
  float previous = dropout_uniform(5, 0);
  for (int k = 1; k <= n; ++k) {
    const float u = dropout_uniform(5, static_cast<uint64_t>(k));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ++buckets[static_cast<int>(u * 16)];
    sum_x += u, sum_xx += double(u) * u, sum_xy += double(u) * previous;
    previous = u;
  }
  double chi2 = 0;
  for (int b : buckets) chi2 += (b - n / 16.0) * (b - n / 16.0) / (n / 16.0);
  const double mean = sum_x / n, var = sum_xx / n - mean * mean, lag1 = (sum_xy / n - mean * mean) / var;
  std::printf("  dropout_uniform: mean %.5f, chi2 over 16 buckets %.1f (15 dof), lag-1 correlation %.5f\n", mean, chi2, lag1);
  EXPECT_NEAR(mean, 0.5, 0.002);
  EXPECT_LT(chi2, 50.0);  // 15 degrees of freedom: p < 1e-5 above 50
  EXPECT_LT(std::abs(lag1), 0.005);
  int same_seed = 0, same_high = 0;
  for (uint64_t k = 0; k < 1000; ++k) {
    same_seed += dropout_uniform(5, k) == dropout_uniform(6, k);
    same_high += dropout_uniform(5, k) == dropout_uniform(5, k + (uint64_t{1} << 32));
  }
  EXPECT_LT(same_seed, 5);
  EXPECT_LT(same_high, 5);
}


// Bucketed batches give every step new shapes. Freed blocks are cached for reuse, but the cache
// must never hold more than the largest working set (it once kept up to 4 GiB, and a training
// run's memory grew to 7 GB).
TEST(Storage, CacheStaysWithinThePeakWorkingSetWhileShapesVary) {
  const size_t floor = size_t{64} << 20;
  Rng rng(3);
  size_t worst = 0;
  for (int step = 0; step < 300; ++step) {
    std::vector<Tensor> alive;
    for (int i = 0; i < 4; ++i)
      alive.push_back(Tensor::empty({1 + static_cast<int64_t>(rng.uniform() * 16'000'000)}));
    alive.clear();
    const StorageCacheStats s = storage_cache_stats();
    EXPECT_LE(s.cached, std::max(s.peak_live, floor));
    worst = std::max(worst, s.cached);
  }
  const StorageCacheStats s = storage_cache_stats();
  std::printf("cache: at most %zu MB held, peak working set %zu MB\n", worst >> 20, s.peak_live >> 20);
  // Reuse still works: the same size again comes from the cache without growing it.
  const size_t before = storage_cache_stats().cached;
  { Tensor t = Tensor::empty({1000}); }
  EXPECT_GE(storage_cache_stats().cached, before);
}

// A decoder whose batch gains and loses rows at every step asks for a slightly different size each
// time: a cached block up to a quarter larger serves it, a much larger one does not (it would
// waste its size) and stays cached for a request of its own size.
TEST(Storage, AFreedBlockServesRequestsUpToAQuarterSmaller) {
  // 160 MB of floats, never written (no page is touched): larger than any block the tests above
  // leave in the cache, so that the blocks seen here are this test's own.
  const int64_t n = 40'000'000;
  const void* freed = nullptr;
  {
    Tensor t = Tensor::empty({n});
    freed = t.data<float>();
  }
  {
    Tensor t = Tensor::empty({n * 17 / 20});  // 85%: taken from the freed block
    EXPECT_EQ(t.data<float>(), freed);
  }
  {
    Tensor t = Tensor::empty({n / 2});  // half: a block of its own
    EXPECT_NE(t.data<float>(), freed);
    Tensor u = Tensor::empty({n});  // the freed block is still there for its own size
    EXPECT_EQ(u.data<float>(), freed);
  }
}

}  // namespace
}  // namespace attn
