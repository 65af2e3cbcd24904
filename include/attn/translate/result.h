// What a translation returns, typed (CTranslate2's TranslationResult with attn's extras), and the
// two forms attn prints it in: a line of text (Moses n-best lines, Marian-style alignments
// "translation ||| 0-0 1-2 2-1") and one JSON object (attn translate --output-format jsonl, and
// attn serve's /v1/translate answers, which are the same objects).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/tokenizer.h"
#include "attn/decode/alignment.h"
#include "attn/decode/search.h"
#include "attn/models/seq2seq.h"
#include "attn/translate/options.h"

namespace attn {

struct TranslationHypothesis {
  std::string text;                 // detokenised; with token ids, the ids ("5 9 14")
  std::vector<std::string> tokens;  // SentencePiece pieces; with token ids, the ids as strings
  std::vector<int32_t> ids;         // without bos and eos
  double score = 0.0;               // logprob / lp(len)
  double logprob = 0.0;
  bool finished = true;             // false: stopped at the maximum length before eos
  // With an alignment asked for: rows target tokens, columns source tokens (or words); empty for a
  // source translated in pieces, which has no one source to align to.
  Matrix alignment;
};

struct TranslationResult {
  int64_t line = 0;                                // 1-based within its input
  std::vector<TranslationHypothesis> hypotheses;   // best first; none for a blank source
  std::vector<std::string> source_tokens;          // what the alignment's columns index (alignment asked)
  bool whole = true;  // false: the source was translated in pieces and joined, so it has no one alignment
};

// What hypotheses are read with: the model alignments come from (an ensemble's first) and the
// tokenizer (null: token ids in and out).
struct ResultReader {
  const Seq2Seq* model = nullptr;
  const data::Tokenizer* tokenizer = nullptr;
};

// The tokens as strings: SentencePiece pieces, or the ids themselves.
std::vector<std::string> tokens_of(const ResultReader& r, const std::vector<int32_t>& ids);
// The source tokens alignments index: the encoder's input without its final eos.
std::vector<int32_t> aligned_source(const ResultReader& r, const std::vector<int32_t>& source);
// The alignment of `target` to `source` from the cross-attention of a teacher-forced pass
// (decode/alignment.h): rows target tokens, columns source tokens (or words, per the options).
Matrix alignment_matrix_of(const ResultReader& r, const TranslateOptions& o, const std::vector<int32_t>& source,
                           const std::vector<int32_t>& target);

// The hypotheses of a source translated in pieces (decode/long_lines.h): the k-th of each piece
// joined in order (tokens concatenated, which SentencePiece detokenises with a space between), the
// scores summed. parts: per piece its hypotheses, best first.
std::vector<Hypothesis> join_pieces(const std::vector<std::vector<Hypothesis>>& parts);

// The result of line `line` from its hypotheses; `source`: the encoder's ids when it was searched
// whole, empty when it was cut in pieces (then it has no alignment).
TranslationResult make_result(const ResultReader& r, const TranslateOptions& o, int64_t line,
                              const std::vector<int32_t>& source, const std::vector<Hypothesis>& hyps);

// The JSON object of a result: line, text, tokens, ids, score, logprob, finished; alignment and
// source_tokens with an alignment; n_best with every hypothesis (all_hypotheses).
nlohmann::json result_json(const TranslationResult& r, const TranslateOptions& o);
// The text output of a result, newline-ended: the translation (with " ||| " and its alignment when
// asked), or with all_hypotheses one Moses n-best line each ("i ||| text ||| score").
std::string result_text(const TranslationResult& r, const TranslateOptions& o);

}  // namespace attn
