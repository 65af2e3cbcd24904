// Continuous batching (decode/stream.h): sentences that join a running search at different steps,
// and leave it when they finish, get exactly what search() gives each of them alone: the same
// tokens, the same scores (within float rounding of a batch's products), on every fixture model.
// Also at the model: rows added to a running DecoderState (add_sentences) step as a decoder
// started on their sentence alone, and the self-attention cache of a decoder that sentences keep
// joining stays bounded.
#include <algorithm>

#include <gtest/gtest.h>

#include "attn/decode/search.h"
#include "attn/decode/stream.h"
#include "attn/models/transformer.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_ids;
using testing::fixture_model;
using testing::transformer_configs;

// Adds sentence i at the step schedule[i] gives (several per step, some on an empty stream after
// it ran dry), steps until every sentence is back; returns each one's hypotheses.
std::vector<std::vector<Hypothesis>> streamed(const Transformer& m, const std::vector<std::vector<int32_t>>& src,
                                              const SearchOptions& o, const std::vector<int>& schedule,
                                              const std::vector<std::vector<int32_t>>& prefixes = {}) {
  SearchStream stream(m, o);
  std::vector<std::vector<Hypothesis>> out(src.size());
  size_t returned = 0;
  for (int step = 0; returned < src.size(); ++step) {
    for (size_t i = 0; i < src.size(); ++i)
      if (schedule[i] == step) stream.add(i, src[i], prefixes.empty() ? std::vector<int32_t>{} : prefixes[i]);
    for (StreamResult& r : stream.step()) {
      EXPECT_TRUE(out[r.id].empty()) << "sentence " << r.id << " returned twice";
      out[r.id] = std::move(r.hypotheses);
      ++returned;
    }
    EXPECT_LT(step, 10000) << "the stream never ends";
    if (step >= 10000) break;
  }
  EXPECT_EQ(stream.size(), 0u);
  return out;
}

void expect_alone(const Transformer& m, const std::vector<std::vector<int32_t>>& src, const SearchOptions& o,
                  const std::vector<std::vector<Hypothesis>>& got, const std::vector<std::vector<int32_t>>& prefixes = {}) {
  for (size_t i = 0; i < src.size(); ++i) {
    SentenceInputs in;
    if (!prefixes.empty()) in.prefixes = {prefixes[i]};
    const std::vector<Hypothesis> alone = search(m, {src[i]}, o, in).front();
    ASSERT_EQ(got[i].size(), alone.size()) << "sentence " << i;
    for (size_t k = 0; k < alone.size(); ++k) {
      EXPECT_EQ(got[i][k].tokens, alone[k].tokens) << "sentence " << i << ", hypothesis " << k;
      EXPECT_NEAR(got[i][k].score, alone[k].score, 1e-4) << "sentence " << i << ", hypothesis " << k;
    }
  }
}

// Three at the start, then one or two every few steps, a gap where the stream runs dry, more.
std::vector<int> staggered(size_t n) {
  std::vector<int> at;
  for (size_t i = 0; i < n; ++i) at.push_back(i < 3 ? 0 : i < 14 ? static_cast<int>(i / 2 * 3) : 400 + static_cast<int>(i));
  return at;
}

TEST(SearchStream, BeamEqualsEachSentenceAlone) {
  for (const std::string& name : transformer_configs()) {
    SCOPED_TRACE(name);
    const Transformer& m = fixture_model(name);
    const auto src = fixture_ids(name, "src.txt");
    SearchOptions o;
    o.beam = 4;
    o.n_best = 3;
    o.max_len = 30;
    expect_alone(m, src, o, streamed(m, src, o, staggered(src.size())));
  }
}

TEST(SearchStream, GreedyWithRulesAndPrefixesEqualsEachSentenceAlone) {
  const std::string name = "pre_shared_l3_h2";
  const Transformer& m = fixture_model(name);
  const auto src = fixture_ids(name, "src.txt");
  std::vector<std::vector<int32_t>> prefixes;
  for (size_t i = 0; i < src.size(); ++i) prefixes.push_back(i % 3 == 0 ? std::vector<int32_t>{7, 9} : std::vector<int32_t>{});
  SearchOptions o;
  o.beam = 1;
  o.length_penalty = 0;
  o.min_len = 4;
  o.no_repeat_ngram = 2;
  o.max_len_a = 1.5;
  o.max_len_b = 3;
  expect_alone(m, src, o, streamed(m, src, o, staggered(src.size()), prefixes), prefixes);
  o.beam = 3;
  o.repetition_penalty = 1.3;
  expect_alone(m, src, o, streamed(m, src, o, staggered(src.size()), prefixes), prefixes);
}

TEST(SearchStream, RefusesWhatSearchRefuses) {
  const Transformer& m = fixture_model("post_shared_l2_h4");
  SearchOptions o;
  SearchStream stream(m, o);
  EXPECT_THROW(stream.add(1, {}), Error);
  EXPECT_THROW(stream.add(2, {5, 900}), Error);
  EXPECT_THROW(stream.add(3, {5, 6}, {m.config.eos_id}), Error);
  EXPECT_EQ(stream.size(), 0u);
  o.sampling.on = true;
  o.beam = 1;
  EXPECT_THROW(SearchStream(m, o), Error);
}

// Sentences taken out while they decode (every third, at staggered steps) or before they join
// never come back, and the others still get what search() gives each alone: removal keeps the
// rows of the sentences left (a cancelled request of attn serve, batcher.h).
TEST(SearchStream, RemovedSentencesLeaveAndTheOthersEqualEachSentenceAlone) {
  const std::string name = "post_unshared_l3_h8";
  const Transformer& m = fixture_model(name);
  const auto src = fixture_ids(name, "src.txt");
  ASSERT_GE(src.size(), 6u);
  SearchOptions o;
  o.beam = 3;
  o.n_best = 2;
  o.max_len = 30;
  SearchStream stream(m, o);
  for (size_t i = 0; i < src.size(); ++i) stream.add(i, src[i]);
  std::vector<std::vector<Hypothesis>> out(src.size());
  std::vector<bool> removed(src.size(), false);
  stream.remove({src.size() - 1});  // queued: never decodes
  removed[src.size() - 1] = true;
  size_t next = 0;  // the next sentence to remove: every third
  for (int step = 0; stream.size() > 0 && step < 1000; ++step) {
    if (step % 2 == 1)
      for (; next + 1 < src.size(); next += 3)
        if (out[next].empty()) {
          stream.remove({next, 12345});  // an id not in the stream is ignored
          removed[next] = true;
          next += 3;
          break;
        }
    for (StreamResult& r : stream.step()) {
      EXPECT_FALSE(removed[r.id]) << "sentence " << r.id << " came back after its removal";
      out[r.id] = std::move(r.hypotheses);
    }
  }
  EXPECT_EQ(stream.size(), 0u);
  size_t kept = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    if (removed[i]) continue;
    ++kept;
    const std::vector<Hypothesis> alone = search(m, {src[i]}, o).front();
    ASSERT_EQ(out[i].size(), alone.size()) << "sentence " << i;
    for (size_t k = 0; k < alone.size(); ++k) {
      EXPECT_EQ(out[i][k].tokens, alone[k].tokens) << "sentence " << i << ", hypothesis " << k;
      EXPECT_NEAR(out[i][k].score, alone[k].score, 1e-4) << "sentence " << i << ", hypothesis " << k;
    }
  }
  EXPECT_GE(kept, src.size() / 2);
  EXPECT_GE(std::count(removed.begin(), removed.end(), true), 2);
}

// Rows joining one every step for 300 steps, each leaving 20 steps after it came: each row's
// log-probs equal those of a decoder started on its sentence alone, and the self-attention cache
// holds a bounded number of positions (the ones no row reads any more are dropped).
TEST(AddSentences, RowsStepAsAloneAndTheCacheStaysBounded) {
  const std::string name = "post_unshared_l3_h8";
  const Transformer& m = fixture_model(name);
  const auto src = fixture_ids(name, "src.txt");
  NoGrad no_grad;
  auto memory_of = [&](const std::vector<int32_t>& s) {
    Tensor ids = Tensor::from_ids(s, {1, static_cast<int64_t>(s.size())});
    return std::make_pair(encode_real_positions(m, ids), padding_mask(ids, m.config.pad_id));
  };
  struct Row {
    size_t sentence;
    DecoderState alone;
    int32_t token;
    int left;
  };
  std::vector<Row> rows;
  DecoderState joined;
  bool started = false;
  int64_t most_positions = 0;
  for (int step = 0; step < 300; ++step) {
    const size_t sentence = static_cast<size_t>(step) % src.size();
    auto [memory, pad] = memory_of(src[sentence]);
    if (!started) joined = start_decoding(m, memory, pad);
    else add_sentences(m, joined, memory, pad);
    started = true;
    rows.push_back({sentence, start_decoding(m, memory, pad), m.config.bos_id, 20});
    std::vector<int32_t> tokens;
    for (const Row& r : rows) tokens.push_back(r.token);
    const Tensor lp = decode_step(m, joined, tokens);
    const int64_t V = m.config.tgt_vocab;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Tensor one = decode_step(m, rows[r].alone, {rows[r].token});
      for (int64_t v = 0; v < V; ++v)
        ASSERT_NEAR(lp.data<float>()[r * V + v], one.data<float>()[v], 1e-5) << "step " << step << ", row " << r;
      // the next token: the row's argmax, so that histories differ between rows
      rows[r].token = static_cast<int32_t>(std::max_element(one.data<float>(), one.data<float>() + V) - one.data<float>());
      --rows[r].left;
    }
    std::vector<int64_t> keep;
    std::vector<Row> kept;
    for (size_t r = 0; r < rows.size(); ++r)
      if (rows[r].left > 0) {
        keep.push_back(static_cast<int64_t>(r));
        kept.push_back(std::move(rows[r]));
      }
    select_rows(joined, keep);
    rows = std::move(kept);
    most_positions = std::max(most_positions, joined.self.front().k.size(2));
  }
  EXPECT_LE(most_positions, 2 * 21) << "the cache grew with the steps, not with the rows' histories";
  EXPECT_LE(joined.memory_k.front().size(0), 2 * 21) << "memory rows are not reused";
}

}  // namespace
}  // namespace attn
