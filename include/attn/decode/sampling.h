// Random sampling (SearchOptions::sampling; CTranslate2's sampling_topk / sampling_topp /
// sampling_temperature, Hugging Face's order): each step, every output draws its next token from
//   p_T(y) = softmax(log p(y | prefix, x) / T)
// cut to the K most probable tokens (top_k > 0), then to the fewest most probable whose p_T
// reaches P (top_p < 1; the token that crosses P is kept), and renormalised. Ties: lower id first.
// top_k = 1 is greedy decoding.
//
// The random numbers come from a counter-based stream: the number for (seed, sentence key,
// sample index, step) is a hash of the four (SplitMix64 rounds), not the next draw of a shared
// generator. So a sentence's samples depend only on the seed, its key (translate: its input
// line) and the model's log-probs -- never on the batch it is in, its neighbours, the order of
// the batches or the number of threads.
//
// With n_best = N each sentence gets N independent samples (sample indices 0..N-1), returned
// best first by score (logprob / lp(len)). A sample's logprob sums the log-probs its tokens were
// drawn from (after decode/constraints.h, before the temperature).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "attn/decode/row_decoder.h"
#include "attn/decode/search.h"

namespace attn {

// A number in [0, 1) (53 random bits) from the stream of (seed, key, sample, step).
double stream_uniform(uint64_t seed, uint64_t key, uint64_t sample, uint64_t step);

// The distribution a row of log-probs [V] is sampled from: (token, probability), only the tokens
// kept by top_k and top_p, probabilities summing to 1; most probable first when top_k or top_p
// cut it, else in id order (a plain draw sorts nothing). Tokens of -inf (banned,
// decode/constraints.h) are never in it.
std::vector<std::pair<int32_t, double>> sampling_distribution(const float* logp, int64_t V,
                                                              const SamplingOptions& o);

// The token of `dist` that u in [0, 1) falls on (cumulative probabilities in dist's order).
int32_t draw(const std::vector<std::pair<int32_t, double>>& dist, double u);

// Samples options.n_best outputs per sentence of the decoder's rows (row r: sentence r);
// max_lens: each sentence's (prefix taken into account).
std::vector<std::vector<Hypothesis>> sample_translations(RowDecoder& decoder, const std::vector<int64_t>& max_lens,
                                                         const SearchOptions& options, const SentenceInputs& inputs);

}  // namespace attn
