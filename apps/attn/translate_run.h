// The loop of attn translate once its flags are parsed: lines read from standard input or
// --input, cut to fit the model (decode/long_lines.h), batched by sentences or by tokens, searched
// (one model or an ensemble, with the prefixes of --prefix) and printed in input order to
// standard output or, atomically, to --output.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/decode/ensemble.h"
#include "attn/decode/long_lines.h"
#include "attn/decode/search.h"
#include "attn/models/seq2seq.h"
#include "attn/decode/shortlist.h"
#include "translate_output.h"

namespace attn::cli {

struct TranslateJob {
  LineOutput out;                        // its model: the first (alignments are read from it)
  std::vector<EnsembleMember> ensemble;  // empty: out.model alone
  SearchOptions search;
  size_t batch = 32;         // sentences a batch
  size_t batch_tokens = 0;   // > 0: batches of at most this many source tokens instead
  OnLong on_long = OnLong::split;
  std::string input, output;  // empty: standard input / output
  std::string prefix_path;    // --prefix: a target prefix per input line (empty: none)
  bool progress = false;      // lines done, rate and ETA on stderr (the binary: when it is a terminal)
  const Shortlist* shortlist = nullptr;  // --shortlist: each sentence's softmax over its own list
};

// An input line as it is translated.
struct Line {
  int64_t number;  // 1-based, for messages
  std::vector<std::vector<int32_t>> pieces;  // the source, in pieces that fit the model; none: blank
  std::vector<int32_t> prefix;               // --prefix: the target's first tokens (its first piece's)
};

// Input line `number` of `name` as the pieces to translate (ids when tokenizer is null), with a
// warning on stderr when it had to be cut (on_long).
Line read_line(std::string& text, int64_t number, const std::string& name, const Seq2SeqCommon& config,
               OnLong on_long, const data::Tokenizer* tokenizer);

// The target prefix `text` (through the tokenizer, or ids) of `line`, checked; `where` names it.
std::vector<int32_t> prefix_ids(const std::string& text, const std::string& where, const Line& line,
                                const Seq2SeqCommon& config, const data::Tokenizer* tokenizer);

// The key of the sampling stream (decode/sampling.h) of piece `piece` of input line `number`
// (1-based): a sample depends on the seed, its line and piece, never on the batch it is in.
uint64_t sampling_key(int64_t number, size_t piece);

// The hypotheses of each line (none for a blank one), its pieces' joined: batched by sentences
// or tokens as the job says, each line's sampling stream keyed by its number.
std::vector<std::vector<Hypothesis>> translate_sources(const TranslateJob& job, const std::vector<Line>& window);

// Whether a window of `lines` lines holding `tokens` source tokens is full: lines are read in
// windows of 8 batches, each window sorted by length into batches (results depend on the windows).
bool window_full(const TranslateJob& job, size_t lines, size_t tokens);

// Translates every input line; returns the process's exit code.
int translate_lines(const TranslateJob& job);

}  // namespace attn::cli
