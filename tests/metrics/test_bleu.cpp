// attn's BLEU against sacreBLEU 2.6.0 on the fixture (300 noisy German hypotheses for mt-ende
// dev lines): corpus BLEU with one and two references, sentence BLEU of every line, and small
// corpora at the edges (empty lines, missing n-gram orders, brevity, length ties).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attn/error.h"
#include "attn/metrics/bleu.h"
#include "attn/metrics/chrf.h"
#include "metrics_fixture.h"

namespace attn::metrics {
namespace {

using nlohmann::json;
using testing::expected;
using testing::fixture_lines;
using testing::kTolerance;

// Every field of a BleuScore against sacreBLEU's; returns the largest |diff| of the reals.
double expect_bleu_equal(const BleuScore& got, const json& want, const std::string& what) {
  double max_diff = std::abs(got.score - want["score"].get<double>());
  max_diff = std::max(max_diff, std::abs(got.bp - want["bp"].get<double>()));
  max_diff = std::max(max_diff, std::abs(got.ratio - want["ratio"].get<double>()));
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    max_diff = std::max(max_diff, std::abs(got.precisions[n] - want["precisions"][n].get<double>()));
    EXPECT_EQ(got.counts[n], want["counts"][n].get<int64_t>()) << what << " order " << n + 1;
    EXPECT_EQ(got.totals[n], want["totals"][n].get<int64_t>()) << what << " order " << n + 1;
  }
  EXPECT_EQ(got.hyp_len, want["hyp_len"].get<int64_t>()) << what;
  EXPECT_EQ(got.ref_len, want["ref_len"].get<int64_t>()) << what;
  EXPECT_EQ(got.signature_like_text(), want["text"].get<std::string>()) << what;
  EXPECT_LE(max_diff, kTolerance) << what << ": " << got.signature_like_text();
  return max_diff;
}

TEST(Bleu, CorpusEqualsSacrebleu) {
  auto hyps = fixture_lines("hyp.de"), refs = fixture_lines("ref.de");
  BleuScore got = corpus_bleu(hyps, refs);
  double diff = expect_bleu_equal(got, expected()["corpus"]["bleu"], "corpus");
  std::printf("%s\n  max |diff| vs sacrebleu %.3g (tolerance %.0e)\n",
              got.signature_like_text().c_str(), diff, kTolerance);
}

TEST(Bleu, CorpusTwoReferencesEqualsSacrebleu) {
  auto hyps = fixture_lines("hyp.de");
  BleuScore got = corpus_bleu_multi(hyps, {fixture_lines("ref.de"), fixture_lines("ref2.de")});
  double diff = expect_bleu_equal(got, expected()["corpus_two_refs"]["bleu"], "two refs");
  std::printf("two refs: %s\n  max |diff| %.3g\n", got.signature_like_text().c_str(), diff);
}

TEST(Bleu, SentenceLevelEqualsSacrebleu) {
  auto hyps = fixture_lines("hyp.de"), refs = fixture_lines("ref.de"), refs2 = fixture_lines("ref2.de");
  const auto& want = expected()["sentences"];
  ASSERT_EQ(want.size(), hyps.size());
  double max_diff = 0, max_diff2 = 0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    double d1 = std::abs(sentence_bleu(hyps[i], {refs[i]}).score - want[i]["bleu"].get<double>());
    double d2 = std::abs(sentence_bleu(hyps[i], {refs[i], refs2[i]}).score -
                         want[i]["bleu_two_refs"].get<double>());
    EXPECT_LE(d1, kTolerance) << "line " << i + 1;
    EXPECT_LE(d2, kTolerance) << "line " << i + 1 << " (two refs)";
    max_diff = std::max(max_diff, d1);
    max_diff2 = std::max(max_diff2, d2);
  }
  std::printf("sentence BLEU of %zu lines: max |diff| %.3g, two refs %.3g\n", hyps.size(), max_diff,
              max_diff2);
}

TEST(Bleu, EdgeCorporaEqualSacrebleu) {
  for (const auto& c : expected()["small_corpora"]) {
    auto hyps = c["hyps"].get<std::vector<std::string>>();
    auto refs = c["refs"].get<std::vector<std::vector<std::string>>>();
    std::string name = c["name"];
    BleuScore got = corpus_bleu_multi(hyps, refs);
    double diff = expect_bleu_equal(got, c["bleu"], name);
    std::printf("%-16s %s  |diff| %.3g\n", name.c_str(), got.signature_like_text().c_str(), diff);
  }
}

TEST(Bleu, IdenticalTextScoresHundred) {
  std::vector<std::string> text = {"Das ist ein Test.", "Noch ein Satz, mit Komma."};
  BleuScore s = corpus_bleu(text, text);
  EXPECT_NEAR(s.score, 100.0, 1e-9);
  EXPECT_EQ(s.bp, 1.0);
}

TEST(Bleu, DifferentLineCountsThrow) {
  std::vector<std::string> hyps = {"a", "b"}, refs = {"a"};
  EXPECT_THROW(corpus_bleu(hyps, refs), Error);
  EXPECT_THROW(sentence_bleu("a", {}), Error);
}

// 10k sentences of BLEU and chrF in well under a second (the validation set of a training run).
TEST(Bleu, TenThousandSentencesAreFast) {
  std::ifstream in(std::string(ATTN_SHARED_DIR) + "/data/mt-ende/train.de");
  if (!in) GTEST_SKIP() << "no ../shared/data/mt-ende/train.de";
  std::vector<std::string> refs, hyps;
  for (std::string line; refs.size() < 10000 && std::getline(in, line);) refs.push_back(line);
  for (size_t i = 0; i < refs.size(); ++i)  // every other line right, the rest unrelated
    hyps.push_back(i % 2 ? refs[i] : refs[(i * 7919) % refs.size()]);
  auto t0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  BleuScore bleu = corpus_bleu(hyps, refs);
  auto t1 = std::chrono::steady_clock::now();
  double chrf = corpus_chrf(hyps, refs);
  auto t2 = std::chrono::steady_clock::now();
  double cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  double bleu_s = std::chrono::duration<double>(t1 - t0).count();
  double chrf_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("%zu sentences: BLEU %.2f in %.3f s, chrF %.2f in %.3f s (CPU time of all threads %.3f s)\n",
              hyps.size(), bleu.score, bleu_s, chrf, chrf_s, cpu_s);
  // CPU time rather than wall time, so that a busy machine does not fail the test.
  EXPECT_LT(cpu_s, ATTN_SANITIZED ? 5.0 : 1.0);  // ASan and UBSan: 1.12 s here (2026-11-26)
}

}  // namespace
}  // namespace attn::metrics
