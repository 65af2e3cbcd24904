// BLEU (Papineni et al., 2002) exactly as sacreBLEU 2.6.0 computes it with its defaults:
// the 13a tokenizer (mteval-v13a), mixed case, n-grams up to 4, the 'exp' smoothing of
// mteval-v13a for orders with no match, brevity penalty exp(1 - ref_len/hyp_len) over the
// corpus, and no effective order (sentence_bleu uses effective order, like sacrebleu's).
//
//   BLEU = BP * exp( (1/4) * sum_n log p_n ),  p_n = clipped n-gram matches / hypothesis n-grams
//
// Text is UTF-8. The tokenizer's rules are ASCII regexes; whitespace follows Python's
// str.split() (so U+00A0, U+2009, U+3000 ... separate words, as in sacreBLEU).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::metrics {

constexpr int kBleuMaxOrder = 4;

// sacreBLEU's Tokenizer13a: drops "<skipped>", joins "-\n", unescapes &quot; &amp; &lt; &gt;,
// splits off punctuation and symbols, '.' and ',' unless between digits, '-' after a digit,
// and leaves single spaces between tokens.
std::string tokenize_13a(std::string_view line);

// Sufficient statistics: they add up over sentences and give the corpus score.
struct BleuStats {
  int64_t hyp_len = 0, ref_len = 0;       // tokens; ref_len is the closest reference length
  std::array<int64_t, kBleuMaxOrder> correct{}, total{};  // clipped matches, hypothesis n-grams
  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0;                                  // 0..100
  std::array<double, kBleuMaxOrder> precisions{};   // 0..100, smoothed as sacreBLEU shows them
  double bp = 0, ratio = 0;                          // brevity penalty, hyp_len / ref_len
  int64_t hyp_len = 0, ref_len = 0;
  std::array<int64_t, kBleuMaxOrder> counts{}, totals{};

  // sacreBLEU's text form:
  // "BLEU = 23.45 55.1/30.2/18.3/11.4 (BP = 0.950 ratio = 0.951 hyp_len = 950 ref_len = 999)"
  std::string signature_like_text() const;
};

// Statistics of one hypothesis against its references (raw, untokenized text). With several
// references, n-gram counts merge by maximum and ref_len is the closest length (shorter on ties).
BleuStats bleu_sentence_stats(std::string_view hyp, const std::vector<std::string_view>& refs);

// The score from (summed) statistics with 'exp' smoothing. effective_order: average only over
// the orders the hypothesis has n-grams of (sacreBLEU's sentence-level setting).
BleuScore bleu_from_stats(const BleuStats& stats, bool effective_order = false);

// Corpus BLEU with one reference per hypothesis line (sacrebleu.corpus_bleu(hyps, [refs])).
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);
// Several reference streams, each as long as hyps (sacrebleu.corpus_bleu(hyps, ref_streams)).
BleuScore corpus_bleu_multi(const std::vector<std::string>& hyps,
                            const std::vector<std::vector<std::string>>& ref_streams);
// Sentence BLEU with effective order (sacrebleu.sentence_bleu(hyp, refs)).
BleuScore sentence_bleu(const std::string& hyp, const std::vector<std::string>& refs);

}  // namespace attn::metrics
