// Sources longer than the model's positions. Nothing is dropped: translate cuts such a source into
// pieces that fit (split, the default), keeps its first positions (truncate), or stops with an
// error naming the line (error). Split pieces are translated apart and their outputs joined in
// order, so output line N is always the translation of input line N.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/data/tokenizer.h"

namespace attn {

enum class OnLong { split, truncate, error };

// "split", "truncate" or "error"; anything else is an error naming `flag`.
OnLong parse_on_long(const std::string& name, const std::string& flag);

// A source as the pieces it is translated in, each at most the model's positions.
struct FittedSource {
  std::vector<std::vector<int32_t>> pieces;  // one when it fits; none for a blank line
  size_t tokens = 0;                         // of the whole source (eos included in text mode)
  bool truncated = false;
};

// Ids as given (--ids): pieces of at most max_ids ids, as equal in length as can be.
FittedSource fit_ids(std::vector<int32_t> ids, size_t max_ids, OnLong policy, const std::string& where);

// Text: tokenised, each piece ending with eos (none when eos < 0). Split pieces end at spaces between words (a word
// longer than a piece is cut between its tokens), so no word is torn apart when it can be helped.
FittedSource fit_text(const data::Tokenizer& tokenizer, const std::string& text, int32_t eos, size_t max_ids,
                      OnLong policy, const std::string& where);

}  // namespace attn
