// The decoder as a search sees it: rows of prefixes (sentences x beam), fed one token per row
// per step, each step giving log p(next token | prefix, source) for every row.
//
//   cached:   the incremental decoder (each layer's self-attention keys/values kept, the
//             encoder-decoder keys/values computed once): one position per step.
//   uncached: the full teacher-forced decode re-run on the whole prefix every step. Slow; it is
//             the reference that shows the cache changes nothing.
#pragma once

#include <vector>

#include "attn/models/transformer.h"

namespace attn {

struct StepDecoder {
  const Transformer* model = nullptr;
  bool cached = true;
  DecoderState state;                          // cached
  Tensor memory, src_pad;                      // uncached: [rows, src_len, d_model], [rows, src_len]
  std::vector<std::vector<int32_t>> prefixes;  // uncached: the tokens fed so far, per row
};

// memory [batch, src_len, d_model] from encode(), src_pad [batch, src_len]: one row per sentence.
// cache_positions: start_decoding's (models/transformer.h).
StepDecoder start_step_decoder(const Transformer& m, const Tensor& memory, const Tensor& src_pad,
                               bool cached, int64_t cache_positions = 0);

// Feeds tokens[r] to row r ([rows] ids) -> log-probabilities of the next token [rows, tgt_vocab].
Tensor step(StepDecoder& d, const std::vector<int32_t>& tokens);

// Row i becomes old row rows[i] (beam reordering; finished sentences leaving the batch).
// same_sources: every row keeps its source sentence (beams reordered within their sentence), so
// the encoder side (memory keys/values, padding mask) stays as it is and only the prefixes move.
void select_rows(StepDecoder& d, const std::vector<int64_t>& rows, bool same_sources = false);

}  // namespace attn
