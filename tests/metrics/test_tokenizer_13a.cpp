// attn's 13a tokenizer against sacreBLEU's Tokenizer13a: hand-picked edge cases (punctuation,
// digits, entities, <skipped>, Unicode whitespace, non-ASCII text) and every fixture hypothesis.
#include <string>

#include <gtest/gtest.h>

#include "attn/metrics/bleu.h"
#include "metrics_fixture.h"

namespace attn::metrics {
namespace {

using testing::expected;
using testing::fixture_lines;

TEST(Tokenizer13a, EdgeCasesEqualSacrebleu) {
  const auto& cases = expected()["tokenizer_cases"];
  ASSERT_GE(cases.size(), 40u);
  int mismatches = 0;
  for (const auto& c : cases) {
    std::string input = c["input"], want = c["output"];
    std::string got = tokenize_13a(input);
    EXPECT_EQ(got, want) << "input: '" << input << "'";
    mismatches += got != want;
  }
  std::printf("13a edge cases: %zu, mismatches %d\n", cases.size(), mismatches);
}

TEST(Tokenizer13a, FixtureHypothesesEqualSacrebleu) {
  auto hyps = fixture_lines("hyp.de");
  const auto& want = expected()["tokenized_hyps"];
  ASSERT_EQ(hyps.size(), want.size());
  int mismatches = 0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    std::string got = tokenize_13a(hyps[i]);
    EXPECT_EQ(got, want[i].get<std::string>()) << "hyp.de:" << i + 1;
    mismatches += got != want[i].get<std::string>();
  }
  std::printf("13a on %zu hypotheses: mismatches %d\n", hyps.size(), mismatches);
}

TEST(Tokenizer13a, KnownSplits) {
  EXPECT_EQ(tokenize_13a("Er kam um 3.15 Uhr, nicht 4."), "Er kam um 3.15 Uhr , nicht 4 .");
  EXPECT_EQ(tokenize_13a("»%s« außerhalb"), "» % s« außerhalb");
  EXPECT_EQ(tokenize_13a("a\u00a0b"), "a b");        // NBSP separates words, as in Python
  EXPECT_EQ(tokenize_13a("a\u200bb"), "a\u200bb");  // zero-width space does not
  EXPECT_EQ(tokenize_13a(""), "");
}

}  // namespace
}  // namespace attn::metrics
