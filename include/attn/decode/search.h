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
//
// Beside the search: random sampling (decode/sampling.h), a forced target prefix, minimum and
// maximum lengths, repetition rules (decode/constraints.h) and ensembles (decode/ensemble.h).
// With none of them asked for, the search is exactly the one above.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/decode/row_decoder.h"
#include "attn/models/seq2seq.h"
#include "attn/models/transformer.h"

namespace attn {

// Sampling instead of search (decode/sampling.h): each next token drawn from the model's
// distribution, divided by the temperature, cut to the top K and then to the top P, renormalised.
struct SamplingOptions {
  bool on = false;
  int top_k = 0;             // the K most probable tokens (0: all; 1: greedy)
  double top_p = 1.0;        // the fewest most probable tokens whose probability reaches P (nucleus)
  double temperature = 1.0;  // T > 0: log-probs divided by T before the softmax
  uint64_t seed = 0;         // with the sentence's key, the sample's index and the step: the random stream
};

// Whose beam search: attn's (torch_ref.py's, above), or transformers' generate() with
// early_stopping=True (generation/beam_search.py), so that a model imported from Hugging Face
// gives its outputs token for token:
//   - each live prefix proposes its 2K best next tokens; of all of them the 2K best are walked in
//     order: an eos among the first K ranks joins the finished list, an eos ranked lower is
//     dropped, any other token the new beam, until the beam holds K;
//   - a finished output scores logprob / len^alpha (len counting the eos; alpha = 1 is
//     transformers' default length_penalty), the K best kept;
//   - a sentence stops at max_len, or (SearchOptions::early_stopping) when K are finished, or (its
//     default, early_stopping=False) when K are finished and the K-th's score is at least the
//     step's best total log-prob over this step's length^alpha (BeamHypotheses.is_done);
//   - one stopped at max_len ranks its live prefixes with the finished ones, each scored
//     logprob / len^alpha, the K best kept (BeamSearchScorer.finalize).
// Or CTranslate2's translate_batch (src/decoding.cc, docs/notes/ct2-rules.md): transformers' rules
// with early_stopping=True, but the step that reaches max_len ends each of its K best candidates,
// eos or not, and they all compete with those finished before (a cut output can win over one that
// finished at that step, where transformers ranks it only when fewer than K finished).
enum class SearchRules { attn, transformers, ctranslate2 };

struct SearchOptions {
  int beam = 4;                 // K; 1 is greedy
  double length_penalty = 0.6;  // alpha
  SearchRules rules = SearchRules::attn;
  // The last token an output may have is eos (transformers' forced_eos_token_id): at the step
  // that reaches max_len only eos may come, and it counts log-prob 0 (as transformers sets it).
  bool eos_at_max_len = false;
  // transformers' early_stopping, for its rules: true, done at K finished; false, its heuristic.
  bool early_stopping = false;
  // transformers' renormalize_logits: after the rules of decode/constraints.h (suppressed tokens,
  // n-grams, ...), each row is log-softmaxed again over the tokens left.
  bool renormalize = false;
  // Tokens never output (transformers' bad_words_ids of one token: OPUS-MT's pad): their
  // log-probs are -inf, the others' left as they are unless `renormalize`.
  std::vector<int32_t> suppress;
  int max_len = 0;              // output tokens, eos included; 0: max_len_a x source length + max_len_b
  double max_len_a = 1.0;       // fairseq's form; the defaults are the paper's source length + 50
  int max_len_b = 50;
  int min_len = 0;              // output tokens before eos may come (a prefix counts)
  int n_best = 1;               // hypotheses returned per sentence (<= beam; with sampling: samples)
  bool use_cache = true;        // false: re-run the full decoder on every prefix (the reference)
  int no_repeat_ngram = 0;      // N > 0: no N-gram twice in an output (decode/constraints.h)
  double repetition_penalty = 1.0;  // R != 1: log-probs of tokens already output times R
  SamplingOptions sampling;
};

// What each sentence brings beside its source; each vector empty or one entry per source.
struct SentenceInputs {
  // Target tokens each output starts with (no eos), CTranslate2's target_prefix: forced, their
  // log-probs counted in the score, then the search goes on. The maximum length counts them and
  // is at least prefix + 1 (within the model's positions).
  std::vector<std::vector<int32_t>> prefixes;
  // The key of each sentence's random stream (sampling); empty: the sentence's index. Give each
  // input sentence its own (translate: its line) so a sample is the same whatever the batch.
  std::vector<uint64_t> keys;
  // Not empty: per sentence, the tokens it may output, sorted (its own shortlist,
  // decode/shortlist.h): its log-probs are a softmax over them alone, its output does not depend
  // on the other sentences of the batch, and the output layer computes only those rows
  // (Transformer only; decode/row_decoder.h).
  std::vector<std::vector<int32_t>> allowed;
};

struct Hypothesis {
  std::vector<int32_t> tokens;  // without bos and eos
  double logprob = 0.0;         // total log-prob, the eos's included when it finished
  double score = 0.0;           // logprob / lp(len)
  // false: the search stopped it at the maximum length before eos came. Such an output is cut
  // off, and from a weak model it is usually one piece repeated to the limit.
  bool finished = true;
};

// lp(len) = ((5 + len) / 6)^alpha  (Wu et al., 2016)
double length_penalty(int64_t len, double alpha);
// What a hypothesis of `len` tokens is divided by under `rules`: lp(len), or len^alpha.
double length_normaliser(int64_t len, double alpha, SearchRules rules);

// sources: token ids as the encoder takes them (eos included if the model expects it), each
// non-empty. Returns per sentence up to n_best hypotheses, best first.
std::vector<std::vector<Hypothesis>> search(const Transformer& m,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options, const SentenceInputs& inputs = {});
// The same for a model of either family (the RNN encoder-decoder decodes step by step through
// decode/rnn_step_decoder.h; use_cache does not apply to it).
std::vector<std::vector<Hypothesis>> search(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options, const SentenceInputs& inputs = {});
// The same over a decoder already started on the sources (row r: sentence r), given each
// source's length (for the maximum length).
std::vector<std::vector<Hypothesis>> search(RowDecoder& decoder, const std::vector<int64_t>& source_lengths,
                                            const SearchOptions& options, const SentenceInputs& inputs = {});

// Checks options against a target vocabulary of `vocab` tokens (beam, n_best, sampling, lengths).
void check_search_options(const SearchOptions& options, int64_t vocab);
// The most output tokens search gives a source of source_len tokens with a prefix of prefix_len
// (eos included): options.max_len, else max_len_a x source_len + max_len_b; at least the prefix + 1;
// within the model's positions. What an answer's size is bounded by before the search runs.
int64_t max_output_tokens(int64_t positions, int64_t source_len, size_t prefix_len, const SearchOptions& options);

}  // namespace attn
