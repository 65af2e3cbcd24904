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
  const Shortlist* shortlist = nullptr;  // --shortlist: each batch's output layer restricted to its union
};

// Translates every input line; returns the process's exit code.
int translate_lines(const TranslateJob& job);

}  // namespace attn::cli
