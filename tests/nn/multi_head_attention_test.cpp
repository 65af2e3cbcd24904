// Cached cross-attention (one query per row, the decoder's step) over a batch of memories padded to
// one length: the keys after a row's last real one are never read, keys padded between real ones
// are masked, and a row whose keys are all padded attends to nothing (zeros, then W^O's bias);
// the result agrees with the uncached cross-attention of the same batch. Cached self-attention
// through a beam's reorderings (rows copied, dropped, the batch growing and shrinking, the cache
// growing past its first capacity) agrees with the uncached causal self-attention of each row's
// own sequence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "attn/nn/multi_head_attention.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

Tensor random_tensor(const Shape& s, uint64_t seed) {
  Tensor t = Tensor::empty(s);
  Rng rng(seed);
  fill_normal(t, 0.0f, 0.5f, rng);
  return t;
}

MultiHeadAttention random_attention(int64_t d, int64_t heads) {
  MultiHeadAttention m;
  m.heads = heads;
  m.W_in = Var(random_tensor({3 * d, d}, 1));
  m.b_in = Var(random_tensor({3 * d}, 2));
  m.out = {Var(random_tensor({d, d}, 3)), Var(random_tensor({d}, 4))};
  return m;
}

TEST(CrossAttentionCached, PaddedKeysAfterTheLastRealOneAreNeverRead) {
  const int64_t B = 4, Tk = 11, d = 32, heads = 4;
  MultiHeadAttention m = random_attention(d, heads);
  Tensor memory = random_tensor({B, Tk, d}, 5), x = random_tensor({B, 1, d}, 6);
  // row 0: no padding; row 1: its last 4 keys; row 2: key 2 and its last 3; row 3: every key
  Tensor pad = Tensor::zeros({B, Tk}, DType::i32);
  int32_t* p = pad.data<int32_t>();
  for (int64_t j = Tk - 4; j < Tk; ++j) p[1 * Tk + j] = 1;
  p[2 * Tk + 2] = 1;
  for (int64_t j = Tk - 3; j < Tk; ++j) p[2 * Tk + j] = 1;
  for (int64_t j = 0; j < Tk; ++j) p[3 * Tk + j] = 1;
  Tensor k, v;
  project_memory(m, memory, &k, &v);  // [B, heads, Tk, d_k]
  Tensor out = cross_attention_cached(m, x, k, v, {pad, false});

  // The same keys and values with NaN after each row's last real key: nothing changes.
  Tensor k_nan = k.clone(), v_nan = v.clone();
  const int64_t dk = d / heads, last_real[B] = {Tk, Tk - 4, Tk - 3, 0};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = last_real[b]; j < Tk; ++j)
        for (int64_t c = 0; c < dk; ++c) {
          const int64_t i = ((b * heads + h) * Tk + j) * dk + c;
          k_nan.data<float>()[i] = v_nan.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
        }
  Tensor out_nan = cross_attention_cached(m, x, k_nan, v_nan, {pad, false});
  for (int64_t i = 0; i < out.numel(); ++i)
    ASSERT_EQ(out.data<float>()[i], out_nan.data<float>()[i]) << "at " << i;

  // Row 3 attends to nothing: its output is W^O 0 + b.
  for (int64_t c = 0; c < d; ++c) EXPECT_EQ(out.at({3, 0, c}), m.out.b.value().at({c})) << c;

  // Against the uncached path (the fused attention over the padded batch).
  NoGrad no_grad;
  Tensor full = cross_attention(m, Var(x), Var(memory), {pad, false}, Context{}).value();
  double worst = 0.0;
  for (int64_t i = 0; i < out.numel(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(out.data<float>()[i] - full.data<float>()[i])));
  std::printf("cached one-query cross-attention vs uncached, padded batch: max |diff| %.2e\n", worst);
  EXPECT_LE(worst, 1e-5);
}

TEST(SelfAttentionStep, BeamReorderingsMatchEachRowsOwnSequence) {
  const int64_t d = 32, heads = 4;
  MultiHeadAttention m = random_attention(d, heads);
  // The rows kept after each step (parents, in the new order); none means keep them as they are.
  const std::vector<std::vector<int64_t>> reorder = {
      {0, 0, 1, 1, 1}, {4, 2, 2, 0}, {}, {3, 1, 0}, {0, 0, 2, 1, 1, 2}, {5, 4}, {1, 0, 1}};
  KVCache cache;
  std::vector<std::vector<std::vector<float>>> seq(2);  // each row's inputs so far
  NoGrad no_grad;
  double worst = 0.0;
  for (int64_t t = 0; t < 21; ++t) {  // past the cache's first capacity of 16 positions
    const int64_t B = static_cast<int64_t>(seq.size());
    Tensor x = random_tensor({B, 1, d}, 100 + static_cast<uint64_t>(t));
    for (int64_t r = 0; r < B; ++r)
      seq[static_cast<size_t>(r)].emplace_back(x.data<float>() + r * d, x.data<float>() + (r + 1) * d);
    Tensor y = self_attention_step(m, x, cache);
    ASSERT_EQ(y.shape(), (Shape{B, 1, d}));
    for (int64_t r = 0; r < B; ++r) {
      const auto& rows = seq[static_cast<size_t>(r)];
      Tensor full = Tensor::empty({1, static_cast<int64_t>(rows.size()), d});
      for (size_t i = 0; i < rows.size(); ++i) std::copy(rows[i].begin(), rows[i].end(), full.data<float>() + i * d);
      Tensor want = self_attention(m, Var(full), {Tensor(), true}, Context{}).value();
      for (int64_t c = 0; c < d; ++c)
        worst = std::max(worst, static_cast<double>(std::fabs(y.at({r, 0, c}) -
                                                               want.at({0, static_cast<int64_t>(rows.size()) - 1, c}))));
    }
    const std::vector<int64_t>& keep = reorder[static_cast<size_t>(t % static_cast<int64_t>(reorder.size()))];
    if (keep.empty() || *std::max_element(keep.begin(), keep.end()) >= B) continue;
    select_rows(cache, keep);
    std::vector<std::vector<std::vector<float>>> next;
    for (int64_t r : keep) next.push_back(seq[static_cast<size_t>(r)]);
    seq = std::move(next);
  }
  std::printf("cached self-attention through beam reorderings vs each row's uncached sequence: max |diff| %.2e\n",
              worst);
  EXPECT_LE(worst, 1e-5);
}

}  // namespace
}  // namespace attn
