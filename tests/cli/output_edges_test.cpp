// Two edges of translate's and attend's output that the http fuzz target (fuzz/http.cpp) found
// through attn serve, where each was a 500:
//   - a line translated in pieces (--on-long split) has no one source, and jsonl output with an
//     alignment asked teacher_forced_attention for an empty source;
//   - an alignment of a translation cut at the model's last position, and attend's document of a searched translation that fills every position put bos before all of
//     it, one position more than the model has ("the sentence is longer than the model's max_len").
#include <gtest/gtest.h>

#include "attn/attend/attend.h"
#include "attn/autodiff/var.h"
#include "attn/translate/result.h"

namespace attn::cli {
namespace {

Seq2Seq tiny(int64_t max_len) {
  TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 12;
  c.d_model = 8, c.heads = 2, c.encoder_layers = c.decoder_layers = 1, c.d_ff = 16, c.max_len = max_len;
  Seq2Seq m = make_seq2seq(c, 7);
  prepare(m, Precision::fp32, Use::inference);
  return m;
}

TEST(OutputEdges, LineInPiecesHasAnEmptyAlignment) {
  NoGrad no_grad;
  const Seq2Seq m = tiny(16);
  const std::vector<Hypothesis> hyps = {{{5, 6, 7}, -1.0, -0.5}, {{5, 8}, -2.0, -1.0}};
  for (const std::string kind : {"hard", "soft"}) {
    const ResultReader out{&m, nullptr};
    TranslateOptions o;
    o.all_hypotheses = true;
    o.alignment = kind == "hard" ? AlignmentKind::hard : AlignmentKind::soft;
    auto line_json = [&](int64_t number, const std::vector<int32_t>& source, const std::vector<Hypothesis>& h) {
      return result_json(make_result(out, o, number, source, h), o);
    };
    const nlohmann::json j = line_json(1, {}, hyps);  // threw attn::Error before
    const nlohmann::json empty = kind == "hard" ? nlohmann::json("") : nlohmann::json::array();
    EXPECT_EQ(j["alignment"], empty) << kind;
    ASSERT_EQ(j["n_best"].size(), 2u);
    for (const auto& h : j["n_best"]) EXPECT_EQ(h["alignment"], empty) << kind;
    // a line with its source keeps its alignment: one row per target token
    const nlohmann::json whole = line_json(1, {3, 4, 2}, hyps);
    if (kind == "hard") EXPECT_FALSE(whole["alignment"].get<std::string>().empty());
    else EXPECT_EQ(whole["alignment"].size(), 3u);
  }
}

TEST(OutputEdges, AlignmentOfATranslationFillingEveryPosition) {
  NoGrad no_grad;
  const Seq2Seq m = tiny(4);
  const std::vector<int32_t> source = {3, 4, 2};
  const std::vector<Hypothesis> hyps = {{{5, 6, 7, 8}, -1.0, -0.5}};  // 4 tokens: every position, no eos
  for (const std::string kind : {"hard", "soft"}) {
    const ResultReader out{&m, nullptr};
    TranslateOptions o;
    o.alignment = kind == "hard" ? AlignmentKind::hard : AlignmentKind::soft;
    const nlohmann::json j = result_json(make_result(out, o, 1, source, hyps), o);  // threw "position 5 beyond max_len 4" before
    if (kind == "soft") {
      ASSERT_EQ(j["alignment"].size(), 4u);  // a row per target token, over the 2 source tokens
      for (const auto& row : j["alignment"]) EXPECT_EQ(row.size(), 2u);
    } else {
      EXPECT_FALSE(j["alignment"].get<std::string>().empty());
    }
  }
  // the rows it has are those of the same target one position shorter would give, plus its last
  const ResultReader out{&m, nullptr};
  TranslateOptions o;
  o.alignment = AlignmentKind::soft;
  const Matrix full = alignment_matrix_of(out, o, source, {5, 6, 7, 8}), prefix = alignment_matrix_of(out, o, source, {5, 6, 7});
  for (size_t r = 0; r < prefix.size(); ++r)
    for (size_t c = 0; c < prefix[r].size(); ++c) EXPECT_NEAR(full[r][c], prefix[r][c], 1e-6);
}

TEST(OutputEdges, AttendDocOfATranslationFillingEveryPosition) {
  NoGrad no_grad;
  const int64_t positions = 5;
  const Seq2Seq m = tiny(positions);
  AttendRequest r;
  r.model = "tiny";
  r.src = "3 4 5";
  r.ids = true;
  r.search.min_len = static_cast<int>(positions);  // eos never allowed: the search stops at the last position
  const nlohmann::json doc = translation_doc(m, Tokenizers{}, r);  // threw "longer than the model's max_len" before
  const auto& target = doc["target"];
  // bos and the first positions-1 tokens in; every token output, no eos (none was chosen)
  ASSERT_EQ(target["tokens"].size(), static_cast<size_t>(positions));
  ASSERT_EQ(target["outputs"].size(), static_cast<size_t>(positions));
  EXPECT_EQ(target["tokens"][0], "1");
  for (int64_t i = 1; i < positions; ++i) EXPECT_EQ(target["tokens"][i], target["outputs"][i - 1]);
  EXPECT_NE(target["outputs"].back(), "2");
  // a translation that ends with eos before the last position is shown with its eos, as before
  r.search.min_len = 0;
  r.search.max_len = 2;
  const nlohmann::json shorter = translation_doc(m, Tokenizers{}, r);
  EXPECT_EQ(shorter["target"]["outputs"].size(), shorter["target"]["tokens"].size());
}

}  // namespace
}  // namespace attn::cli
