// chrF (Popović, 2015) exactly as sacreBLEU 2.6.0 computes it with its defaults ("chrF2"):
// character n-grams of orders 1..6 over Unicode code points (not bytes), whitespace removed,
// no word n-grams, beta = 2, and sacreBLEU's "effective order" averaging:
//
//   P = mean over orders n with hyp_n > 0 and ref_n > 0 of match_n / hyp_n   (R likewise / ref_n)
//   chrF = 100 * (1 + beta^2) P R / (beta^2 P + R)
//
// Counts are summed over the corpus before the averaging. With several references, each
// sentence uses the reference that gives it the best sentence-level chrF (the first on ties).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::metrics {

constexpr int kChrfCharOrder = 6;
constexpr int kChrfBeta = 2;

// Per order n (index n-1): hypothesis n-grams (0 when the reference has none of that order),
// reference n-grams, clipped matches.
struct ChrfStats {
  std::array<int64_t, kChrfCharOrder> hyp{}, ref{}, match{};
  ChrfStats& operator+=(const ChrfStats& other);
};

// Statistics of one hypothesis against the best of its references (raw text).
ChrfStats chrf_sentence_stats(std::string_view hyp, const std::vector<std::string_view>& refs);

// The score (0..100) from (summed) statistics.
double chrf_from_stats(const ChrfStats& stats);

// Corpus chrF with one reference per line (sacrebleu.corpus_chrf(hyps, [refs]).score).
double corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);
double corpus_chrf_multi(const std::vector<std::string>& hyps,
                         const std::vector<std::vector<std::string>>& ref_streams);
double sentence_chrf(const std::string& hyp, const std::vector<std::string>& refs);

// sacreBLEU's text form: "chrF2 = 45.67".
std::string chrf_signature_like_text(double score);

}  // namespace attn::metrics
