// chrF as sacreBLEU 2.6.0 computes it (metrics/chrf.py with char_order=6, word_order=0, beta=2,
// whitespace=False, eps_smoothing=False).
#include "attn/metrics/chrf.h"

#include <cstdio>

#include "attn/error.h"
#include "ngram_match.h"
#include "unicode_text.h"

namespace attn::metrics {
namespace {

// Reusable buffers: code points of the hypothesis and of a reference, one n-gram table.
struct ChrfScratch {
  std::vector<uint32_t> hyp, ref;
  std::vector<detail::NgramKey> hyp_keys, ref_keys;  // n-grams of the current order
  detail::NgramTable ref_counts;
};

// CHRF._get_match_statistics for every order (21 bits per code point in a key).
ChrfStats match_statistics(ChrfScratch& s) {
  ChrfStats stats;
  for (int n = 1; n <= kChrfCharOrder; ++n) {
    detail::extend_keys(s.hyp_keys, s.hyp, n, 21);
    detail::extend_keys(s.ref_keys, s.ref, n, 21);
    int64_t ref_count = static_cast<int64_t>(s.ref_keys.size());
    stats.hyp[n - 1] = ref_count == 0 ? 0 : static_cast<int64_t>(s.hyp_keys.size());
    stats.ref[n - 1] = ref_count;
    detail::count_keys(s.ref_keys, s.ref_counts);
    stats.match[n - 1] = detail::take_matches(s.hyp_keys, s.ref_counts);
  }
  return stats;
}

// CHRF._compute_segment_statistics: the reference with the best sentence chrF, first on ties.
ChrfStats sentence_stats(std::string_view hyp, const std::vector<std::string_view>& refs,
                         ChrfScratch& s) {
  check(!refs.empty(), "chrf: a hypothesis needs at least one reference");
  detail::code_points_without_whitespace(hyp, s.hyp);
  ChrfStats best;
  double best_f = -1.0;
  for (auto r : refs) {
    detail::code_points_without_whitespace(r, s.ref);
    ChrfStats stats = match_statistics(s);
    double f = chrf_from_stats(stats);
    if (f > best_f) best_f = f, best = stats;
  }
  return best;
}

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& o) {
  for (int n = 0; n < kChrfCharOrder; ++n)
    hyp[n] += o.hyp[n], ref[n] += o.ref[n], match[n] += o.match[n];
  return *this;
}

// CHRF._compute_f_score without eps smoothing: average precision and recall over the orders
// where both sides have n-grams, then F-beta of the averages.
double chrf_from_stats(const ChrfStats& stats) {
  const double factor = kChrfBeta * kChrfBeta;
  double avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int n = 0; n < kChrfCharOrder; ++n) {
    if (stats.hyp[n] > 0 && stats.ref[n] > 0) {
      avg_prec += static_cast<double>(stats.match[n]) / static_cast<double>(stats.hyp[n]);
      avg_rec += static_cast<double>(stats.match[n]) / static_cast<double>(stats.ref[n]);
      ++effective_order;
    }
  }
  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0.0) return 0.0;
  double score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

ChrfStats chrf_sentence_stats(std::string_view hyp, const std::vector<std::string_view>& refs) {
  ChrfScratch scratch;
  return sentence_stats(hyp, refs, scratch);
}

double corpus_chrf_multi(const std::vector<std::string>& hyps,
                         const std::vector<std::vector<std::string>>& ref_streams) {
  const ChrfStats sum = detail::corpus_stats<ChrfStats, ChrfScratch>(
      "corpus_chrf", hyps, ref_streams,
      [](std::string_view hyp, const std::vector<std::string_view>& refs, ChrfScratch& scratch) {
        return sentence_stats(hyp, refs, scratch);
      });
  return chrf_from_stats(sum);
}

double corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  return corpus_chrf_multi(hyps, {refs});
}

double sentence_chrf(const std::string& hyp, const std::vector<std::string>& refs) {
  std::vector<std::string_view> views(refs.begin(), refs.end());
  return chrf_from_stats(chrf_sentence_stats(hyp, views));
}

std::string chrf_signature_like_text(double score) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "chrF%d = %.2f", kChrfBeta, score);
  return buf;
}

}  // namespace attn::metrics
