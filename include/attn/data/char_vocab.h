// The classifier's vocabulary (seed 002): one token per Unicode code point ("char", so Chinese
// works without segmentation) or per whitespace-separated word ("word", for English), built from
// the training set by frequency, with a size cap and a minimum count. Ids 0, 1, 2 are reserved:
// <PAD> (padding to pad_size), <UNK> (unseen or cut tokens), <CLS> (the first position when the
// classifier pools on a [CLS] token). Saved as vocab.txt, one token per line, in id order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::data {

inline constexpr int32_t kVocabPad = 0, kVocabUnk = 1, kVocabCls = 2;

// "char": one token per code point (whitespace kept as tokens); "word": split at ASCII whitespace.
std::vector<std::string> split_tokens(std::string_view text, const std::string& level);

struct CharVocab {
  std::string level = "char";                 // "char" or "word"
  std::vector<std::string> tokens;            // id -> token; tokens[0..2] = <PAD> <UNK> <CLS>
  std::unordered_map<std::string, int32_t> ids;

  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  int32_t id(const std::string& token) const;  // kVocabUnk when absent

  // The ids of `text`, with [CLS] first when `cls`, truncated or padded with <PAD> to `length`
  // (the seed's pad_size: "long texts cut, short texts padded").
  std::vector<int32_t> encode(std::string_view text, int64_t length, bool cls = false) const;
};

struct VocabOptions {
  std::string level = "char";
  int64_t max_size = 10000;  // ids kept, the reserved three included (seed: MAX_VOCAB_SIZE 10000)
  int64_t min_count = 1;     // tokens seen fewer times become <UNK> (seed: min_freq 1)
};

// Most frequent first; ties broken by the token's bytes so the result is deterministic.
CharVocab build_vocab(const std::vector<std::string>& texts, const VocabOptions& o);

// vocab.txt: the first line is "#level=char" or "#level=word", then one token per line.
void save_vocab(const CharVocab& v, const std::string& path);
CharVocab load_vocab(const std::string& path);

}  // namespace attn::data
