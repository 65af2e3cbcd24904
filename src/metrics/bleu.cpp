// BLEU as sacreBLEU 2.6.0 computes it (metrics/bleu.py): statistics per sentence, summed over
// the corpus, then BLEU.compute_bleu with smooth_method='exp'.
#include "attn/metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "attn/error.h"
#include "ngram_match.h"
#include "unicode_text.h"

namespace attn::metrics {
namespace {

// A token of one of the sentences being compared: its text and where it stands.
struct TokenPlace {
  std::string_view text;
  uint32_t sentence, position;
};

// Reusable buffers for the statistics of one sentence at a time.
struct BleuScratch {
  std::vector<std::string> tokenized;               // refs..., hyp
  std::vector<std::vector<std::string_view>> words;  // their tokens
  std::vector<TokenPlace> places;                    // all tokens, for interning
  std::vector<std::vector<uint32_t>> ids;            // their token ids
  std::vector<std::vector<detail::NgramKey>> keys;   // their n-gram keys of the current order
  detail::NgramTable ref_counts, one_ref;
};

// Token ids that are equal exactly when the token texts are, shared by a hypothesis and its
// references (sorting the tokens of one sentence is cheaper than a hash map of strings).
void assign_token_ids(BleuScratch& s) {
  s.places.clear();
  s.ids.resize(s.words.size());
  for (uint32_t k = 0; k < s.words.size(); ++k) {
    s.ids[k].resize(s.words[k].size());
    for (uint32_t i = 0; i < s.words[k].size(); ++i) s.places.push_back({s.words[k][i], k, i});
  }
  std::sort(s.places.begin(), s.places.end(),
            [](const TokenPlace& a, const TokenPlace& b) { return a.text < b.text; });
  uint32_t id = 0;
  for (size_t j = 0; j < s.places.size(); ++j) {
    if (j > 0 && s.places[j].text != s.places[j - 1].text) ++id;
    s.ids[s.places[j].sentence][s.places[j].position] = id;
  }
}

// BLEU._get_closest_ref_len: the closest reference length, the shorter one on ties.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<std::vector<uint32_t>>& ids,
                        size_t n_refs) {
  int64_t best_diff = -1, best_len = -1;
  for (size_t r = 0; r < n_refs; ++r) {
    int64_t len = static_cast<int64_t>(ids[r].size());
    int64_t diff = std::llabs(hyp_len - len);
    if (best_diff == -1 || diff < best_diff) {
      best_diff = diff;
      best_len = len;
    } else if (diff == best_diff && len < best_len) {
      best_len = len;
    }
  }
  return best_len;
}

// BLEU._compute_segment_statistics: references merge by each n-gram's maximum count.
BleuStats sentence_stats(std::string_view hyp, const std::vector<std::string_view>& refs,
                         BleuScratch& s) {
  check(!refs.empty(), "bleu: a hypothesis needs at least one reference");
  const size_t n_refs = refs.size();
  s.tokenized.resize(n_refs + 1);
  s.words.resize(n_refs + 1);
  for (size_t k = 0; k <= n_refs; ++k) {
    s.tokenized[k] = tokenize_13a(detail::rstrip_whitespace(k < n_refs ? refs[k] : hyp));
    detail::split_whitespace(s.tokenized[k], s.words[k]);
  }
  assign_token_ids(s);
  const auto& hyp_ids = s.ids[n_refs];

  BleuStats stats;
  stats.hyp_len = static_cast<int64_t>(hyp_ids.size());
  stats.ref_len = closest_ref_len(stats.hyp_len, s.ids, n_refs);
  s.keys.resize(n_refs + 1);
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    for (size_t k = 0; k <= n_refs; ++k) detail::extend_keys(s.keys[k], s.ids[k], n, 32);
    detail::count_keys(s.keys[0], s.ref_counts);
    for (size_t r = 1; r < n_refs; ++r) {
      detail::count_keys(s.keys[r], s.one_ref);
      s.one_ref.for_each([&](detail::NgramKey key, int32_t count) {
        int32_t& merged = s.ref_counts.at(key);
        merged = std::max(merged, count);
      });
    }
    stats.total[n - 1] = static_cast<int64_t>(s.keys[n_refs].size());
    stats.correct[n - 1] = detail::take_matches(s.keys[n_refs], s.ref_counts);
  }
  return stats;
}

// sacreBLEU's my_log: log floored at -9999999999 for a zero precision.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

std::string format_fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& o) {
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
  for (int n = 0; n < kBleuMaxOrder; ++n) correct[n] += o.correct[n], total[n] += o.total[n];
  return *this;
}

BleuStats bleu_sentence_stats(std::string_view hyp, const std::vector<std::string_view>& refs) {
  BleuScratch scratch;
  return sentence_stats(hyp, refs, scratch);
}

// BLEU.compute_bleu(..., smooth_method='exp'), statement for statement.
BleuScore bleu_from_stats(const BleuStats& stats, bool effective_order) {
  BleuScore s;
  s.hyp_len = stats.hyp_len;
  s.ref_len = stats.ref_len;
  s.counts = stats.correct;
  s.totals = stats.total;
  s.ratio = stats.ref_len ? static_cast<double>(stats.hyp_len) / stats.ref_len : 0.0;
  s.bp = 1.0;
  if (stats.hyp_len < stats.ref_len)
    s.bp = stats.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) / stats.hyp_len)
                             : 0.0;
  bool any_match = std::any_of(stats.correct.begin(), stats.correct.end(),
                               [](int64_t c) { return c != 0; });
  if (!any_match) return s;  // score 0, precisions 0 (sacreBLEU's early stop, #141)

  double smooth_mteval = 1.0;
  int eff_order = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    const double total = static_cast<double>(stats.total[n - 1]);
    if (stats.total[n - 1] == 0) break;
    if (effective_order) eff_order = n;
    if (stats.correct[n - 1] == 0) {
      smooth_mteval *= 2;
      s.precisions[n - 1] = 100.0 / (smooth_mteval * total);
    } else {
      s.precisions[n - 1] = 100.0 * static_cast<double>(stats.correct[n - 1]) / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += floored_log(s.precisions[n]);
  s.score = s.bp * std::exp(log_sum / eff_order);
  return s;
}

std::string BleuScore::signature_like_text() const {
  std::string text = "BLEU = " + format_fixed(score, 2) + " ";
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (n > 0) text += '/';
    text += format_fixed(precisions[n], 1);
  }
  text += " (BP = " + format_fixed(bp, 3) + " ratio = " + format_fixed(ratio, 3) +
          " hyp_len = " + std::to_string(hyp_len) + " ref_len = " + std::to_string(ref_len) + ")";
  return text;
}

BleuScore corpus_bleu_multi(const std::vector<std::string>& hyps,
                            const std::vector<std::vector<std::string>>& ref_streams) {
  const BleuStats sum = detail::corpus_stats<BleuStats, BleuScratch>(
      "corpus_bleu", hyps, ref_streams,
      [](std::string_view hyp, const std::vector<std::string_view>& refs, BleuScratch& scratch) {
        return sentence_stats(hyp, refs, scratch);
      });
  return bleu_from_stats(sum, /*effective_order=*/false);
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  return corpus_bleu_multi(hyps, {refs});
}

BleuScore sentence_bleu(const std::string& hyp, const std::vector<std::string>& refs) {
  std::vector<std::string_view> views(refs.begin(), refs.end());
  return bleu_from_stats(bleu_sentence_stats(hyp, views), /*effective_order=*/true);
}

}  // namespace attn::metrics
