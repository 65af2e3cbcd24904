// attn's chrF against sacreBLEU 2.6.0's chrF2 on the fixture: corpus with one and two
// references, every sentence, edge corpora; and that n-grams are over code points, not bytes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attn/error.h"
#include "attn/metrics/chrf.h"
#include "metrics_fixture.h"

namespace attn::metrics {
namespace {

using testing::expected;
using testing::fixture_lines;
using testing::kTolerance;

TEST(Chrf, CorpusEqualsSacrebleu) {
  auto hyps = fixture_lines("hyp.de"), refs = fixture_lines("ref.de");
  double got = corpus_chrf(hyps, refs), want = expected()["corpus"]["chrf"];
  std::printf("%s (sacrebleu %.10f, attn %.10f) |diff| %.3g tolerance %.0e\n",
              chrf_signature_like_text(got).c_str(), want, got, std::abs(got - want), kTolerance);
  EXPECT_LE(std::abs(got - want), kTolerance);
}

TEST(Chrf, CorpusTwoReferencesEqualsSacrebleu) {
  auto hyps = fixture_lines("hyp.de");
  double got = corpus_chrf_multi(hyps, {fixture_lines("ref.de"), fixture_lines("ref2.de")});
  double want = expected()["corpus_two_refs"]["chrf"];
  std::printf("two refs: attn %.10f sacrebleu %.10f |diff| %.3g\n", got, want, std::abs(got - want));
  EXPECT_LE(std::abs(got - want), kTolerance);
}

TEST(Chrf, SentenceLevelEqualsSacrebleu) {
  auto hyps = fixture_lines("hyp.de"), refs = fixture_lines("ref.de"), refs2 = fixture_lines("ref2.de");
  const auto& want = expected()["sentences"];
  ASSERT_EQ(want.size(), hyps.size());
  double max_diff = 0, max_diff2 = 0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    double d1 = std::abs(sentence_chrf(hyps[i], {refs[i]}) - want[i]["chrf"].get<double>());
    double d2 = std::abs(sentence_chrf(hyps[i], {refs[i], refs2[i]}) -
                         want[i]["chrf_two_refs"].get<double>());
    EXPECT_LE(d1, kTolerance) << "line " << i + 1;
    EXPECT_LE(d2, kTolerance) << "line " << i + 1 << " (two refs)";
    max_diff = std::max(max_diff, d1);
    max_diff2 = std::max(max_diff2, d2);
  }
  std::printf("sentence chrF of %zu lines: max |diff| %.3g, two refs %.3g\n", hyps.size(), max_diff,
              max_diff2);
}

TEST(Chrf, EdgeCorporaEqualSacrebleu) {
  for (const auto& c : expected()["small_corpora"]) {
    auto hyps = c["hyps"].get<std::vector<std::string>>();
    auto refs = c["refs"].get<std::vector<std::vector<std::string>>>();
    double got = corpus_chrf_multi(hyps, refs), want = c["chrf"];
    std::printf("%-16s chrF attn %.10f sacrebleu %.10f\n", c["name"].get<std::string>().c_str(), got,
                want);
    EXPECT_LE(std::abs(got - want), kTolerance) << c["name"];
  }
}

TEST(Chrf, CountsCodePointsNotBytes) {
  // "Größe" is 5 code points (7 bytes); whitespace of any kind is dropped first.
  ChrfStats s = chrf_sentence_stats("Grö ße", {"Gr\u00a0öße"});
  EXPECT_EQ(s.hyp[0], 5);
  EXPECT_EQ(s.ref[0], 5);
  EXPECT_EQ(s.match[0], 5);
  EXPECT_EQ(s.hyp[5], 0);  // no 6-grams in 5 characters
  EXPECT_NEAR(sentence_chrf("Grö ße", {"Gr\u00a0öße"}), 100.0, 1e-12);
  // ä vs a share no character, although they share no byte either way: 0 and not an error.
  EXPECT_EQ(sentence_chrf("ä", {"a"}), 0.0);
}

TEST(Chrf, DifferentLineCountsThrow) {
  std::vector<std::string> hyps = {"a", "b"}, refs = {"a"};
  EXPECT_THROW(corpus_chrf(hyps, refs), Error);
}

}  // namespace
}  // namespace attn::metrics
