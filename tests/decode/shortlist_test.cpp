// Vocabulary shortlists (decode/shortlist.h):
//   - the lists are the top-K target pieces by Dice, checked against counts made here by brute force;
//   - a file round-trips; a shortlist holding every piece changes no output, and scores only by rounding;
//   - a real restriction: greedy over the restricted output layer equals a greedy written here over
//     the full model's teacher-forced log-probs, renormalised over the allowed tokens (tokens and
//     log-probs), alone and with all 24 sentences in one batch (the output layer over their union,
//     each renormalised over its own list), and every output token is allowed; through the CLI
//     (attn shortlist, translate --shortlist) too.
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "attn/decode/search.h"
#include "attn/decode/shortlist.h"
#include "attn/error.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_model;

const char* kModel = "post_shared_l2_h4";

TEST(Shortlist, ListsAreTheTopKByDice) {
  const auto src = fixture_ids(kModel, "src.txt"), tgt = fixture_ids(kModel, "tgt.txt");
  const Shortlist s = build_shortlist(src, tgt, 48, 48, {3, 5});
  // Brute force: sentence counts of every piece and pair.
  std::map<int32_t, double> cs, ct;
  std::map<std::pair<int32_t, int32_t>, double> joint;
  for (size_t i = 0; i < src.size(); ++i) {
    const std::set<int32_t> a(src[i].begin(), src[i].end()), b(tgt[i].begin(), tgt[i].end());
    for (int32_t x : a) cs[x]++;
    for (int32_t y : b) ct[y]++;
    for (int32_t x : a)
      for (int32_t y : b) joint[{x, y}]++;
  }
  for (int32_t x = 0; x < 48; ++x) {
    std::vector<std::pair<double, int32_t>> dice;  // (-dice, id): sorted best first, lower id first
    for (int32_t y = 0; y < 48; ++y)
      if (joint.count({x, y})) dice.push_back({-2 * joint[{x, y}] / (cs[x] + ct[y]), y});
    std::sort(dice.begin(), dice.end());
    std::vector<int32_t> expected;
    for (size_t i = 0; i < dice.size() && i < 3; ++i) expected.push_back(dice[i].second);
    EXPECT_EQ(s.by_source[static_cast<size_t>(x)], expected) << "source piece " << x;
  }
  EXPECT_EQ(s.frequent.size(), 5u);
  const std::string path = (std::filesystem::temp_directory_path() / "attn_shortlist_test.safetensors").string();
  save_shortlist(s, path);
  const Shortlist back = load_shortlist(path, 48, 48);
  EXPECT_EQ(back.by_source, s.by_source);
  EXPECT_EQ(back.frequent, s.frequent);
  EXPECT_THROW(load_shortlist(path, 50, 48), Error);  // another model's source vocabulary
  std::filesystem::remove(path);
}

SearchOptions options(int beam) {
  SearchOptions o;
  o.beam = beam;
  o.max_len = 20;
  return o;
}

TEST(Shortlist, EveryPieceChangesNothing) {
  const Transformer& m = fixture_model(kModel);
  const auto src = fixture_ids(kModel, "src.txt");
  SentenceInputs all;
  std::vector<int32_t> every(48);
  for (int32_t t = 0; t < 48; ++t) every[static_cast<size_t>(t)] = t;
  all.allowed.assign(src.size(), every);
  for (int beam : {1, 4}) {
    const auto plain = search(m, src, options(beam)), listed = search(m, src, options(beam), all);
    for (size_t i = 0; i < src.size(); ++i) {
      EXPECT_EQ(listed[i].front().tokens, plain[i].front().tokens) << "line " << i + 1;
      // Each sentence's rows multiply its own copy of W_out (a product of fewer rows, another
      // kernel): equal up to fp32 rounding, not bit for bit.
      EXPECT_NEAR(listed[i].front().logprob, plain[i].front().logprob, 1e-4) << "line " << i + 1;
    }
  }
}

// Greedy over the full model's log-probs at each prefix (full teacher-forced pass, no step decoder),
// renormalised over `allowed`: the tokens and their total log-prob.
std::pair<std::vector<int32_t>, double> restricted_greedy(const Transformer& m, const std::vector<int32_t>& src,
                                                          const std::vector<int32_t>& allowed) {
  std::vector<int32_t> in = {m.config.bos_id};
  double total = 0;
  NoGrad no_grad;
  const Tensor s = Tensor::from_ids(src, {1, static_cast<int64_t>(src.size())});
  for (int step = 0; step < 20; ++step) {
    Context ctx;
    Var memory = encode(m, s, ctx);
    Tensor logits = decode(m, Tensor::from_ids(in, {1, static_cast<int64_t>(in.size())}), memory,
                           padding_mask(s, m.config.pad_id), ctx).value().contiguous();
    const float* last = logits.data<float>() + (static_cast<int64_t>(in.size()) - 1) * 48;
    double z = 0;
    int32_t best = allowed.front();
    for (int32_t t : allowed) {
      z += std::exp(static_cast<double>(last[t]));
      if (last[t] > last[best]) best = t;
    }
    total += static_cast<double>(last[best]) - std::log(z);
    if (best == m.config.eos_id) break;
    in.push_back(best);
  }
  return {{in.begin() + 1, in.end()}, total};
}

TEST(Shortlist, RestrictedGreedyEqualsTheRenormalisedFullModel) {
  const Transformer& m = fixture_model(kModel);
  const auto src = fixture_ids(kModel, "src.txt"), tgt = fixture_ids(kModel, "tgt.txt");
  const Shortlist s = build_shortlist(src, tgt, 48, 48, {2, 3});
  // All 24 in one batch, each sentence's rows multiplied by its own list's rows of the output layer.
  SentenceInputs batch;
  for (const auto& x : src) batch.allowed.push_back(shortlist_vocabulary(s, {x}, {{m.config.eos_id}}, 48));
  const auto batched = search(m, src, options(1), batch);
  SearchOptions uncached = options(1);
  uncached.use_cache = false;  // the reference decoder: the full log-probs renormalised over each list
  const auto reference = search(m, src, uncached, batch);
  int differ = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    SentenceInputs in;
    in.allowed = {batch.allowed[i]};
    const std::vector<int32_t>& allowed = batch.allowed[i];
    ASSERT_LT(allowed.size(), 30u);
    const auto got = search(m, {src[i]}, options(1), in).front().front();
    const auto [tokens, logprob] = restricted_greedy(m, src[i], allowed);
    EXPECT_EQ(got.tokens, tokens) << "line " << i + 1;
    EXPECT_NEAR(got.logprob, logprob, 1e-4) << "line " << i + 1;
    EXPECT_EQ(batched[i].front().tokens, tokens) << "line " << i + 1 << " in the batch";
    EXPECT_NEAR(batched[i].front().logprob, logprob, 1e-4) << "line " << i + 1 << " in the batch";
    EXPECT_EQ(reference[i].front().tokens, tokens) << "line " << i + 1 << ", uncached";
    EXPECT_NEAR(reference[i].front().logprob, logprob, 1e-4) << "line " << i + 1 << ", uncached";
    for (int32_t t : got.tokens)
      EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), t)) << "line " << i + 1;
    differ += got.tokens != fixture_ids(kModel, "greedy.txt")[i];
  }
  std::printf("restricted greedy differs from the full model's on %d of %zu lines\n", differ, src.size());
  EXPECT_GT(differ, 0);  // the restriction bites
}

// Beam 4 with the lists: the cached decoder equals the reference (the full re-decode's log-probs
// renormalised over each list), both ways it computes a step: a sentence alone (its rows times its
// list's rows of W_out: the list is shorter than the vocabulary) and all 24 in one batch (the lists
// together are longer: the full output layer, renormalised).
TEST(Shortlist, BeamOverListedRowsEqualsTheReference) {
  const Transformer& m = fixture_model(kModel);
  const auto src = fixture_ids(kModel, "src.txt"), tgt = fixture_ids(kModel, "tgt.txt");
  const Shortlist s = build_shortlist(src, tgt, 48, 48, {2, 3});
  SentenceInputs batch;
  for (const auto& x : src) batch.allowed.push_back(shortlist_vocabulary(s, {x}, {{m.config.eos_id}}, 48));
  SearchOptions o = options(4);
  o.n_best = 4;
  const auto batched = search(m, src, o, batch);
  SearchOptions uncached = o;
  uncached.use_cache = false;
  const auto reference = search(m, src, uncached, batch);
  for (size_t i = 0; i < src.size(); ++i) {
    SentenceInputs one;
    one.allowed = {batch.allowed[i]};
    ASSERT_LT(one.allowed[0].size(), 48u);
    const auto alone = search(m, {src[i]}, o, one).front();
    for (const auto* got : {&batched[i], &alone}) {
      ASSERT_EQ(got->size(), reference[i].size()) << "line " << i + 1;
      for (size_t k = 0; k < got->size(); ++k) {
        EXPECT_EQ((*got)[k].tokens, reference[i][k].tokens) << "line " << i + 1 << ", hypothesis " << k + 1;
        EXPECT_NEAR((*got)[k].score, reference[i][k].score, 1e-4) << "line " << i + 1 << ", hypothesis " << k + 1;
      }
    }
  }
}

}  // namespace
}  // namespace attn
