#include "attn/decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/decode/constraints.h"
#include "attn/decode/sampling.h"
#include "attn/error.h"
#include "search_steps.h"

namespace attn {

double length_penalty(int64_t len, double alpha) {
  return std::pow((5.0 + static_cast<double>(len)) / 6.0, alpha);
}

double length_normaliser(int64_t len, double alpha, SearchRules rules) {
  return rules != SearchRules::attn ? std::pow(static_cast<double>(len), alpha) : length_penalty(len, alpha);
}

namespace {

std::vector<std::vector<Hypothesis>> run_search(RowDecoder& decoder, const std::vector<int64_t>& max_lens,
                                                const SearchOptions& o, const SentenceInputs& in) {
  const Constraints constraints = detail::constraints_of(o, decoder.eos_id);
  std::vector<detail::SentenceSearch> sentences;
  for (size_t i = 0; i < max_lens.size(); ++i)
    sentences.push_back(detail::start_sentence(static_cast<int64_t>(i), max_lens[i],
                                               in.prefixes.empty() ? std::vector<int32_t>{} : in.prefixes[i]));
  while (detail::search_step(decoder, sentences, o, constraints)) {
  }
  std::vector<std::vector<Hypothesis>> out;
  for (const detail::SentenceSearch& s : sentences) out.push_back(detail::results(s, o));
  return out;
}

std::vector<int64_t> lengths_of(const std::vector<std::vector<int32_t>>& sources) {
  std::vector<int64_t> lengths;
  for (const auto& s : sources) lengths.push_back(static_cast<int64_t>(s.size()));
  return lengths;
}

}  // namespace

void check_search_options(const SearchOptions& o, int64_t vocab) {
  check(o.beam >= 1 && o.beam <= vocab, "search: beam must be in [1, the target vocabulary = ", vocab, "], got ",
        o.beam);
  const SamplingOptions& s = o.sampling;
  if (s.on) {
    check(o.beam == 1, "search: sampling draws one token per output: beam must be 1, got ", o.beam);
    check(o.n_best >= 1, "search: n_best (samples) must be at least 1, got ", o.n_best);
    check(s.top_k >= 0, "search: sampling top_k must be >= 0, got ", s.top_k);
    check(s.top_p > 0 && s.top_p <= 1, "search: sampling top_p must be in (0, 1], got ", s.top_p);
    check(s.temperature > 0 && std::isfinite(s.temperature), "search: sampling temperature must be > 0, got ",
          s.temperature);
  } else {
    check(o.n_best >= 1 && o.n_best <= o.beam, "search: n_best must be in [1, beam = ", o.beam, "], got ", o.n_best);
  }
  check(o.repetition_penalty > 0 && std::isfinite(o.repetition_penalty),
        "search: repetition_penalty must be > 0, got ", o.repetition_penalty);
  check(o.no_repeat_ngram >= 0 && o.min_len >= 0 && o.max_len >= 0,
        "search: no_repeat_ngram, min_len and max_len must be >= 0");
  check(std::isfinite(o.max_len_a) && o.max_len_a >= 0, "search: max_len_a must be >= 0, got ", o.max_len_a);
}

std::vector<std::vector<Hypothesis>> search(RowDecoder& decoder, const std::vector<int64_t>& source_lengths,
                                            const SearchOptions& o, const SentenceInputs& in) {
  check_search_options(o, decoder.tgt_vocab);
  const size_t n = source_lengths.size();
  check(in.prefixes.empty() || in.prefixes.size() == n, "search: ", in.prefixes.size(), " prefixes for ", n,
        " sentences");
  check(in.keys.empty() || in.keys.size() == n, "search: ", in.keys.size(), " keys for ", n, " sentences");
  check(in.allowed.empty() || in.allowed.size() == n, "search: ", in.allowed.size(), " allowed lists for ", n,
        " sentences");
  std::vector<int64_t> max_lens;
  for (size_t i = 0; i < n; ++i) {
    const size_t prefix = in.prefixes.empty() ? 0 : in.prefixes[i].size();
    if (prefix > 0) detail::check_prefix(in.prefixes[i], decoder.tgt_vocab, decoder.eos_id, i + 1);
    max_lens.push_back(detail::max_len_of(decoder.max_len, source_lengths[i], prefix, o));
  }
  NoGrad no_grad;
  if (o.sampling.on) return sample_translations(decoder, max_lens, o, in);
  return run_search(decoder, max_lens, o, in);
}

std::vector<std::vector<Hypothesis>> search(const Transformer& m,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o, const SentenceInputs& in) {
  check_search_options(o, m.config.tgt_vocab);
  if (sources.empty()) return {};
  RowDecoder decoder = start_row_decoder(m, sources, o.use_cache, in.allowed);
  return search(decoder, lengths_of(sources), o, in);
}

std::vector<std::vector<Hypothesis>> search(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& o, const SentenceInputs& in) {
  check_search_options(o, m.common().tgt_vocab);
  if (sources.empty()) return {};
  RowDecoder decoder = start_row_decoder(m, sources, o.use_cache, in.allowed);
  return search(decoder, lengths_of(sources), o, in);
}

int64_t max_output_tokens(int64_t positions, int64_t source_len, size_t prefix_len, const SearchOptions& options) {
  return detail::max_len_of(positions, source_len, prefix_len, options);
}

}  // namespace attn
