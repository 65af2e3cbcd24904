// The Transformer variants beyond torch_ref.py's model against PyTorch: learned positions
// (pos_embed.weight) and the GELU feed-forward, alone and together, post-LN and pre-LN
// (tests/fixtures/variants, made by make_variant_fixtures.py with nn.Transformer(activation=
// "gelu") and an nn.Embedding position table): teacher-forced log-probs within 1e-4 and greedy
// output token for token, through import-torch's loader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "attn/decode/search.h"
#include "attn/models/model_dir.h"
#include "attn/ops.h"

namespace attn {
namespace {

std::string dir_of(const std::string& name) { return std::string(ATTN_TEST_DATA) + "/variants/" + name; }

template <typename T>
std::vector<std::vector<T>> rows(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::vector<T>> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    out.emplace_back();
    for (T x; s >> x;) out.back().push_back(x);
  }
  return out;
}

class VariantTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantTest, LogProbsAndGreedyEqualTorch) {
  const std::string dir = dir_of(GetParam());
  Transformer m = import_torch(dir);
  const bool learned = m.config.positions == Positions::learned, gelu = m.config.activation == Activation::gelu;
  EXPECT_TRUE(learned || gelu) << "a variant fixture is neither";
  auto input = rows<int32_t>(dir + "/logits_input.txt");
  auto expected = rows<float>(dir + "/logits.txt");
  ASSERT_EQ(input.size(), 2u);
  const int64_t S = static_cast<int64_t>(input[0].size()), T = static_cast<int64_t>(input[1].size());
  const int64_t V = m.config.tgt_vocab;
  ASSERT_EQ(expected.size(), static_cast<size_t>(T));

  NoGrad no_grad;
  Context ctx;
  Tensor src = Tensor::from_ids(input[0], {1, S});
  Var memory = encode(m, src, ctx);
  Tensor logits = decode(m, Tensor::from_ids(input[1], {1, T}), memory, padding_mask(src, m.config.pad_id), ctx).value();
  Tensor logp = log_softmax(Var(logits.reshape({T, V}))).value();
  double worst = 0;
  for (int64_t t = 0; t < T; ++t) {
    ASSERT_EQ(expected[t].size(), static_cast<size_t>(V));
    for (int64_t v = 0; v < V; ++v) worst = std::max<double>(worst, std::fabs(expected[t][v] - logp.at({t, v})));
  }

  SearchOptions greedy;
  greedy.beam = 1;
  greedy.max_len = 20;
  auto sources = rows<int32_t>(dir + "/src.txt");
  auto want = rows<int32_t>(dir + "/greedy.txt");
  auto got = search(m, sources, greedy);
  ASSERT_EQ(got.size(), want.size());
  int differ = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i][0].tokens, want[i]) << "sentence " << i + 1;
    differ += got[i][0].tokens != want[i];
  }
  std::printf("%-20s (%s positions, %s): log-prob max |diff| %.2e, greedy %d of %zu differ\n", GetParam().c_str(),
              name(m.config.positions), name(m.config.activation), worst, differ, want.size());
  EXPECT_LE(worst, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VariantTest,
                         ::testing::Values("learned_gelu_post", "learned_relu_pre", "sinusoidal_gelu_pre"));

}  // namespace
}  // namespace attn
