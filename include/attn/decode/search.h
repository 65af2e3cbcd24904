// Greedy and beam search (§6.1: beam 4, length penalty alpha = 0.6, maximum output length
// input length + 50) in one batched loop over sentences x beam, with the KV cache.
//
// The rules are those of torch_ref.py's beam_search, so that the output equals the reference
// token for token. Per sentence, every step:
//   - each live prefix proposes its K best next tokens (ties: lower id first);
//   - the K*K candidates are sorted by total log-prob (stable: ties keep proposal order) and
//     walked in order: one ending in eos joins the finished list, any other the new beam, until
//     the beam holds K;
//   - the finished list keeps its K best by score = logprob / lp(len), the GNMT length penalty
//     lp(len) = ((5 + len) / 6)^alpha, len counting the eos (alpha = 0: plain log-prob);
//   - the sentence stops after max_len steps, when its beam is empty, or when K are finished
//     and the worst of them is >= every live prefix's best possible score: logprob / lp(max_len)
//     when alpha > 0, else logprob / lp(len + 1).
// If nothing finished, the live prefixes stand in, ranked by score with len = their length.
// K = 1 is greedy decoding: argmax until eos or max_len tokens (eos included).
//
// Sentences are padded into one batch and encoded once; the encoder-decoder keys and values are
// computed once per sentence; a sentence that stops leaves the batch, so later steps get cheaper.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/models/seq2seq.h"
#include "attn/models/transformer.h"

namespace attn {

struct SearchOptions {
  int beam = 4;                 // K; 1 is greedy
  double length_penalty = 0.6;  // alpha
  int max_len = 0;              // generated tokens, eos included; 0: source length + 50
  int n_best = 1;               // hypotheses returned per sentence (<= beam)
  bool use_cache = true;        // false: re-run the full decoder on every prefix (the reference)
};

struct Hypothesis {
  std::vector<int32_t> tokens;  // without bos and eos
  double logprob = 0.0;         // total log-prob, the eos's included when it finished
  double score = 0.0;           // logprob / lp(len)
};

// lp(len) = ((5 + len) / 6)^alpha  (Wu et al., 2016)
double length_penalty(int64_t len, double alpha);

// sources: token ids as the encoder takes them (eos included if the model expects it), each
// non-empty. Returns per sentence up to n_best hypotheses, best first.
std::vector<std::vector<Hypothesis>> search(const Transformer& m,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options);
// The same for a model of either family (the RNN encoder-decoder decodes step by step through
// decode/rnn_step_decoder.h; use_cache does not apply to it).
std::vector<std::vector<Hypothesis>> search(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options);

}  // namespace attn
