// Private to src/decode: the beam search of search.h one step at a time, over sentences that
// each keep their own count of steps, so that the same steps serve a search over a fixed batch
// (search.cpp) and one that sentences join while it runs (stream.cpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "attn/decode/constraints.h"
#include "attn/decode/row_decoder.h"
#include "attn/decode/search.h"

namespace attn::detail {

struct Prefix {
  std::vector<int32_t> tokens;  // generated so far (no bos)
  double logprob = 0.0;
  int64_t row = 0;  // its row in the decoder's batch
};

// One sentence's search: the live beam and the finished list.
struct SentenceSearch {
  std::vector<Prefix> alive;
  std::vector<Hypothesis> finished;
  std::vector<int32_t> prefix;  // forced target prefix (no eos)
  int64_t max_len = 0;
  int64_t steps = 0;  // taken so far
  bool done = false;
  bool stopped = false;  // done by the stopping rule, not by the maximum length
};

// A sentence about to take its first step, fed at decoder row `row`.
SentenceSearch start_sentence(int64_t row, int64_t max_len, std::vector<int32_t> prefix);

// A forced target prefix's ids: in the target vocabulary of `vocab`, none of them eos; `sentence`
// names it in the message.
void check_prefix(const std::vector<int32_t>& prefix, int64_t vocab, int32_t eos, uint64_t sentence);

// A sentence's maximum output length: options.max_len, else a x source length + b (the paper's
// + 50 by default); at least the prefix + 1; within the decoder's positions.
int64_t max_len_of(int64_t positions, int64_t source_len, size_t prefix_len, const SearchOptions& o);

// One step of every sentence not done, their rows the decoder's rows in order: feeds each live
// prefix's last token, constrains and advances each sentence, then keeps the rows of the
// survivors (decoder.select_rows), renumbered in order. Returns false when no row is left (the
// decoder is then as it was before the step's selection).
bool search_step(RowDecoder& decoder, std::vector<SentenceSearch>& sentences, const SearchOptions& o,
                 const Constraints& constraints);

// The rules of decode/constraints.h that `o` asks for.
Constraints constraints_of(const SearchOptions& o, int32_t eos);

// The n best at the end; the live prefixes stand in when nothing finished (transformers' rules:
// unless the stopping rule ended the search, they compete with the finished ones).
std::vector<Hypothesis> results(const SentenceSearch& s, const SearchOptions& o);

}  // namespace attn::detail
