// What attn translate prints for each input line: the translation as text, Moses n-best lines,
// Marian-style word alignments ("translation ||| 0-0 1-2 2-1"), or one JSON object a line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/tokenizer.h"
#include "attn/decode/alignment.h"
#include "attn/decode/search.h"
#include "attn/models/seq2seq.h"

namespace attn::cli {

struct OutputOptions {
  bool jsonl = false;          // --output-format jsonl
  bool n_best = false;         // --n-best given: every hypothesis, not only the best
  std::string alignment;       // "" (none), "hard" or "soft"
  int alignment_layer = 0;     // 1-based; 0: the second-to-last
  bool alignment_words = false;  // over whitespace words instead of SentencePiece pieces
};

// The tokenizer is null in --ids mode (ids in, ids out). source: the encoder's ids of the line
// (eos included in text mode); empty for an empty line.
struct LineOutput {
  const Seq2Seq* model = nullptr;
  const data::Tokenizer* tokenizer = nullptr;
  OutputOptions options;
};

// The tokens as strings: SentencePiece pieces, or the ids themselves in --ids mode.
std::vector<std::string> tokens_of(const LineOutput& out, const std::vector<int32_t>& ids);
// The source tokens alignments index: the encoder's input without its final eos.
std::vector<int32_t> aligned_source(const LineOutput& out, const std::vector<int32_t>& source);
// The alignment of hypothesis `target` to `source` from the cross-attention of a teacher-forced
// pass (decode/alignment.h): rows target tokens, columns source tokens (or words, per options).
Matrix alignment_matrix_of(const LineOutput& out, const std::vector<int32_t>& source,
                           const std::vector<int32_t>& target);

// The hypotheses of a source translated in pieces (decode/long_lines.h): the k-th of each piece
// joined in order (tokens concatenated, which SentencePiece detokenises with a space between), the
// scores summed. parts: per piece its hypotheses, best first.
std::vector<Hypothesis> join_pieces(const std::vector<std::vector<Hypothesis>>& parts);

// The JSON object of line `number` (1-based) that --output-format jsonl prints (attn serve answers
// with the same objects): text, tokens, ids, score, logprob; n_best, alignment and source_tokens as
// the options ask.
nlohmann::json line_json(const LineOutput& out, int64_t number, const std::vector<int32_t>& source,
                         const std::vector<Hypothesis>& hyps);

// The output of line `number` (1-based), one line (or n lines for text n-best), newline-ended.
std::string format_line(const LineOutput& out, int64_t number, const std::vector<int32_t>& source,
                        const std::vector<Hypothesis>& hyps);

}  // namespace attn::cli
