// Every attention weight of a forward pass (models/attention_maps.h): equal to PyTorch's
// nn.MultiheadAttention weights (need_weights=True, average_attn_weights=False) on torch_ref.py's
// fixture models, within 1e-5 (tests/fixtures/attention, made by make_attention_fixtures.py); and
// word alignments exactly right on a model built so that its encoder-decoder attention is a
// known permutation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attn/decode/alignment.h"
#include "attn/io/npz.h"
#include "attn/models/model_dir.h"
#include "attn/models/teacher_forced_attention.h"

namespace attn {
namespace {

constexpr double kTolerance = 1e-5;

std::vector<int32_t> ids_of(const Tensor& t, int64_t row) {
  const Tensor r = t.select(0, row).contiguous();
  return {r.data<int32_t>(), r.data<int32_t>() + r.numel()};
}

// max |a - b| over every element; the shapes must agree.
double max_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  if (a.shape() != b.shape()) return 1e9;
  const Tensor x = a.contiguous(), y = b.contiguous();
  double worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(x.data<float>()[i]) - y.data<float>()[i]));
  return worst;
}

class AttentionMapsTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(AttentionMapsTorch, EveryHeadOfEveryLayerEqualsPyTorch) {
  const std::string dir = std::string(ATTN_TEST_DATA) + "/transformer/" + GetParam();
  const Transformer m = import_torch(dir);
  auto expected = io::load_npz(std::string(ATTN_TEST_DATA) + "/attention/" + GetParam() + ".npz");
  const Tensor src = expected.at("src"), tgt_in = expected.at("tgt_in");
  NoGrad no_grad;
  AttentionMaps maps;
  Var memory = encode(m, src, Context{}, &maps);
  decode(m, tgt_in, memory, padding_mask(src, m.config.pad_id), Context{}, &maps);
  ASSERT_EQ(maps.encoder_self.size(), static_cast<size_t>(m.config.encoder_layers));
  ASSERT_EQ(maps.decoder_self.size(), static_cast<size_t>(m.config.decoder_layers));
  ASSERT_EQ(maps.cross.size(), static_cast<size_t>(m.config.decoder_layers));
  for (const auto& [stack, got] : {std::pair{"encoder_self", &maps.encoder_self},
                                   std::pair{"decoder_self", &maps.decoder_self}, std::pair{"cross", &maps.cross}})
    for (size_t l = 0; l < got->size(); ++l) {
      const std::string key = std::string(stack) + "." + std::to_string(l);
      EXPECT_LT(max_diff((*got)[l], expected.at(key)), kTolerance) << key;
    }
  // The padded source's keys get no weight.
  EXPECT_EQ(maps.cross[0].at({1, 0, 0, 6}), 0.0f);
}

// One sentence alone (teacher_forced_attention, batch 1, no padding) gives the batch's weights
// over its real positions.
TEST_P(AttentionMapsTorch, OneSentenceAloneEqualsItsRowOfTheBatch) {
  const std::string dir = std::string(ATTN_TEST_DATA) + "/transformer/" + GetParam();
  const Transformer m = import_torch(dir);
  auto expected = io::load_npz(std::string(ATTN_TEST_DATA) + "/attention/" + GetParam() + ".npz");
  std::vector<int32_t> src = ids_of(expected.at("src"), 1);
  while (src.back() == m.config.pad_id) src.pop_back();
  const int64_t S = static_cast<int64_t>(src.size());
  const AttentionMaps maps = teacher_forced_attention(m, src, ids_of(expected.at("tgt_in"), 1));
  for (size_t l = 0; l < maps.cross.size(); ++l) {
    const Tensor want = expected.at("cross." + std::to_string(l)).slice(0, 1, 2).slice(3, 0, S);
    EXPECT_LT(max_diff(maps.cross[l], want), kTolerance) << "cross." << l;
    const Tensor want_self = expected.at("decoder_self." + std::to_string(l)).slice(0, 1, 2);
    EXPECT_LT(max_diff(maps.decoder_self[l], want_self), kTolerance) << "decoder_self." << l;
  }
  for (size_t l = 0; l < maps.encoder_self.size(); ++l) {
    const Tensor want = expected.at("encoder_self." + std::to_string(l)).slice(0, 1, 2).slice(2, 0, S).slice(3, 0, S);
    EXPECT_LT(max_diff(maps.encoder_self[l], want), kTolerance) << "encoder_self." << l;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AttentionMapsTorch,
                         ::testing::Values("post_shared_l2_h4", "pre_unshared_l1_h1", "post_unshared_l3_h8",
                                           "pre_shared_l3_h2"));

// A Transformer whose first decoder layer's encoder-decoder attention sends decoder input token u
// to the source token partner[u], and nowhere else:
//   token k's embedding is 25 (e_k - e_{k+16}) (d_model 32), large enough that sqrt(d) Embed + PE
//   is, after LayerNorm, 4 (e_k - e_{k+16}) up to a few percent;
//   every attention's output projection and every FFN's second layer are 0, so the encoder's
//   output and the first decoder layer's cross-attention input are those LayerNorms of the
//   embeddings;
//   W^Q = 3 I and W^K = 3 M with M (e_s - e_{s+16}) = e_u - e_{u+16} for partner[u] = s: the
//   score of query u on key s is 3^2 4^2 2 / sqrt(32) ~ 51 when partner[u] = s, ~0 otherwise.
Transformer permutation_model(const std::map<int32_t, int32_t>& partner) {
  TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 16;
  c.d_model = 32;
  c.heads = 1;
  c.encoder_layers = 1;
  c.decoder_layers = 2;
  c.d_ff = 8;
  c.dropout = 0;
  Transformer m = make_transformer(c, 7);
  auto zero = [&](const std::string& key) { m.named.at(key).value().fill(0.0f); };
  zero("transformer.encoder.layers.0.self_attn.out_proj.weight");
  zero("transformer.encoder.layers.0.self_attn.out_proj.bias");
  zero("transformer.encoder.layers.0.linear2.weight");
  zero("transformer.encoder.layers.0.linear2.bias");
  zero("transformer.decoder.layers.0.self_attn.out_proj.weight");
  zero("transformer.decoder.layers.0.self_attn.out_proj.bias");
  Tensor E = m.named.at("src_embed.weight").value();
  E.fill(0.0f);
  for (int64_t k = 0; k < 16; ++k) {
    E.data<float>()[k * 32 + k] = 25.0f;
    E.data<float>()[k * 32 + k + 16] = -25.0f;
  }
  Tensor W = m.named.at("transformer.decoder.layers.0.multihead_attn.in_proj_weight").value();  // [96, 32]
  Tensor b = m.named.at("transformer.decoder.layers.0.multihead_attn.in_proj_bias").value();
  W.fill(0.0f);
  b.fill(0.0f);
  for (int64_t i = 0; i < 32; ++i) W.data<float>()[i * 32 + i] = 3.0f;  // W^Q = 3 I
  for (const auto& [u, s] : partner) {                                   // W^K rows 32..63
    W.data<float>()[(32 + u) * 32 + s] = 3.0f;
    W.data<float>()[(32 + u + 16) * 32 + s + 16] = 3.0f;
  }
  for (int64_t i = 0; i < 32; ++i) W.data<float>()[(64 + i) * 32 + i] = 1.0f;  // W^V = I
  return m;
}

TEST(Alignment, PermutationModelIsAlignedExactly) {
  // Source tokens 4..9 then eos; target 10..15. Target token j is read at the decoder position fed
  // y_{j-1} (bos for j = 0); the model sends that input to source position sigma[j].
  const std::vector<int32_t> src = {4, 5, 6, 7, 8, 9, 2}, y = {10, 11, 12, 13, 14, 15};
  const std::vector<int64_t> sigma = {2, 0, 1, 5, 3, 4};
  std::map<int32_t, int32_t> partner;
  std::vector<int32_t> tgt_in = {1};
  tgt_in.insert(tgt_in.end(), y.begin(), y.end());
  for (size_t j = 0; j < sigma.size(); ++j) partner[tgt_in[j]] = src[static_cast<size_t>(sigma[j])];
  const Transformer m = permutation_model(partner);
  const AttentionMaps maps = teacher_forced_attention(m, src, tgt_in);
  ASSERT_EQ(default_alignment_layer(2), 1);
  const Matrix a = alignment_matrix(maps, default_alignment_layer(2), 6, 6);
  ASSERT_EQ(a.size(), 6u);
  for (size_t j = 0; j < 6; ++j) {
    ASSERT_EQ(a[j].size(), 6u);
    EXPECT_GT(a[j][static_cast<size_t>(sigma[j])], 0.999f) << "target " << j;
  }
  EXPECT_EQ(format_hard(hard_alignment(a)), "2-0 0-1 1-2 5-3 3-4 4-5");
  // The last layer was not built to align: reading it gives something else.
  EXPECT_NE(format_hard(hard_alignment(alignment_matrix(maps, 2, 6, 6))), "2-0 0-1 1-2 5-3 3-4 4-5");
}

TEST(Alignment, WordsJoinPieces) {
  // "▁a b ▁c" (words: 0 0 1) -> target "▁x ▁y z" (words 0 1 1)
  EXPECT_EQ(words_of_pieces({"\xE2\x96\x81" "a", "b", "\xE2\x96\x81" "c"}), (std::vector<int64_t>{0, 0, 1}));
  const Matrix a = {{0.6f, 0.3f, 0.1f}, {0.1f, 0.1f, 0.8f}, {0.5f, 0.0f, 0.5f}};
  const Matrix w = word_matrix(a, {0, 0, 1}, {0, 1, 1});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_FLOAT_EQ(w[0][0], 0.9f);
  EXPECT_FLOAT_EQ(w[0][1], 0.1f);
  EXPECT_FLOAT_EQ(w[1][0], 0.35f);
  EXPECT_FLOAT_EQ(w[1][1], 0.65f);
  EXPECT_EQ(format_hard(hard_alignment(w)), "0-0 1-1");
  EXPECT_EQ(format_soft({{0.5f, 0.25f}, {1.0f, 0.0f}}), "0.5,0.25 1,0");
}

}  // namespace
}  // namespace attn
