// The RNN encoder-decoder as a search sees it (the counterpart of step_decoder.h): rows of
// prefixes, fed one token per row per step, each step giving log p(next token | prefix, source).
// The state is small (each decoder layer's h, c per row); the encoder states and attention keys
// are computed once per sentence.
#pragma once

#include <vector>

#include "attn/models/rnn_seq2seq.h"

namespace attn {

struct RnnStepDecoder {
  const RnnSeq2Seq* model = nullptr;
  RnnMemory memory;  // [rows, ...]
  RnnState state;    // s_{t-1} per decoder layer, [rows, d_model]
};

// Encodes src [batch, src_len] (inference: no gradient, no dropout); one row per sentence.
RnnStepDecoder start_rnn_step_decoder(const RnnSeq2Seq& m, const Tensor& src);

// Feeds tokens[r] to row r -> log-probabilities of the next token [rows, tgt_vocab].
Tensor step(RnnStepDecoder& d, const std::vector<int32_t>& tokens);

// Row i becomes old row rows[i]; with same_sources the encoder side stays as it is.
void select_rows(RnnStepDecoder& d, const std::vector<int64_t>& rows, bool same_sources = false);

}  // namespace attn
