// A decoder as the search drives it, whatever lies behind it: a Transformer's step decoder
// (step_decoder.h), an RNN's (rnn_step_decoder.h), or an ensemble of such decoders. Rows are
// prefixes (sentences x beam); each step feeds one token per row and gives
// log p(next token | prefix, source) for every row. As in CTranslate2, the search knows nothing
// of the model: it sees only this.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "attn/models/seq2seq.h"
#include "attn/models/transformer.h"

namespace attn {

struct RowDecoder {
  // tokens[r] fed to row r -> log-probabilities of the next token [rows, tgt_vocab]
  std::function<Tensor(const std::vector<int32_t>&)> step;
  // Optional, in place of step: the logits whose log-softmax step would give, handed to `visit`
  // in consecutive blocks of rows (first row, logits [block rows, tgt_vocab]) as the output layer
  // makes them, so that a search needing only each row's k best reads a block while it is still
  // in cache and never writes the full log-probs (search_steps.cpp). Set only where the two agree
  // to the bit. (LogitBlock: models/transformer.h.)
  std::function<void(const std::vector<int32_t>&, const LogitBlock& visit)> step_logits;
  // Row i becomes old row rows[i]; same_sources: every row keeps its sentence (see step_decoder.h).
  std::function<void(const std::vector<int64_t>&, bool)> select_rows;
  // Continuous batching: sentences (their sources) join as rows after the existing ones, each at
  // its own first step from the next step on. Empty: this decoder cannot take sentences once
  // started (only the cached Transformer's can, without shortlists).
  std::function<void(const std::vector<std::vector<int32_t>>&)> add_sources;
  int32_t bos_id = 1, eos_id = 2;
  int64_t tgt_vocab = 0;
  int64_t max_len = 0;  // the decoder's positions: the most tokens an output can hold
};

// Encodes sources (one row per sentence, each non-empty) once and returns their decoder.
// cached: the KV-cache step decoder (false: the full re-decode, the reference; Transformer only).
// allowed (shortlists, decode/shortlist.h): empty, or per sentence the tokens it may output
// (sorted ids). Each row's log-probs are then a softmax over its sentence's list alone (every
// other token -inf), whatever else is in the batch, and each sentence's rows multiply only its
// list's rows of the output layer. Transformer only (the RNN's output layer is an error to restrict).
// open_ended: sentences will keep joining (add_sources, continuous batching), so the KV caches grow
// from 16 positions as the rows need them; otherwise they start with room for 1.5x the longest
// source + 16 (outputs run about as long as their sources, EN->DE 1.1-1.3x), sparing the copies
// into bigger buffers and the fresh pages (beam 4, batch 32, d_model 128: 1.05-1.07x the search's
// speed). The open-ended default keeps a server's memory to what its rows have needed.
RowDecoder start_row_decoder(const Transformer& m, const std::vector<std::vector<int32_t>>& sources, bool cached,
                             const std::vector<std::vector<int32_t>>& allowed = {}, bool open_ended = false);
RowDecoder start_row_decoder(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources, bool cached,
                             const std::vector<std::vector<int32_t>>& allowed = {}, bool open_ended = false);

// An ensemble (Marian's --models --weights): one decoder whose log-probs are
//   sum_m weights[m] * log p_m(y | prefix, x)
// (not renormalised, as Marian; weights 1/M each give the average of the log-probs). The members
// must share the target vocabulary (size, bos, eos); its positions are the fewest of theirs.
RowDecoder ensemble_row_decoder(std::vector<RowDecoder> members, const std::vector<double>& weights);

}  // namespace attn
