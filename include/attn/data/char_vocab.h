// The classifier's vocabulary (seed 002): one token per Unicode code point ("char", so Chinese
// works without segmentation), per whitespace-separated word ("word", for English), or per
// SentencePiece piece ("spm": a unigram model trained on the training texts, kept as spm.model
// beside vocab.txt), built from the training set by frequency, with a size cap and a minimum count. Ids 0, 1, 2 are reserved:
// <PAD> (padding to pad_size), <UNK> (unseen or cut tokens), <CLS> (the first position when the
// classifier pools on a [CLS] token). Saved as vocab.txt, one token per line, in id order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attn/data/tokenizer.h"

namespace attn::data {

inline constexpr int32_t kVocabPad = 0, kVocabUnk = 1, kVocabCls = 2;

// "char": one token per code point (whitespace kept as tokens); "word": split at ASCII whitespace.
std::vector<std::string> split_tokens(std::string_view text, const std::string& level);

struct CharVocab {
  std::string level = "char";                 // "char", "word" or "spm"
  std::shared_ptr<const Tokenizer> spm;       // level "spm": the model that cuts texts into pieces
  std::vector<std::string> tokens;            // id -> token; tokens[0..2] = <PAD> <UNK> <CLS>
  std::unordered_map<std::string, int32_t> ids;

  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  int32_t id(const std::string& token) const;  // kVocabUnk when absent
  std::vector<std::string> split(std::string_view text) const;  // the tokens of `text` at this level

  // The ids of `text`, with [CLS] first when `cls`, truncated or padded with <PAD> to `length`
  // (the seed's pad_size: "long texts cut, short texts padded").
  std::vector<int32_t> encode(std::string_view text, int64_t length, bool cls = false) const;
};

struct VocabOptions {
  std::string level = "char";  // "char", "word" or "spm"
  int64_t max_size = 10000;  // ids kept, the reserved three included (seed: MAX_VOCAB_SIZE 10000)
  int64_t min_count = 1;     // tokens seen fewer times become <UNK> (seed: min_freq 1)
  int spm_vocab = 8000;      // level "spm": pieces of the SentencePiece model
};

// Trains the SentencePiece unigram model of level "spm" on `texts` (one per line), writing
// model_prefix.model and model_prefix.vocab; `vocab_size` pieces, attn's special ids.
std::shared_ptr<const Tokenizer> train_piece_model(const std::vector<std::string>& texts,
                                                   const std::string& model_prefix, int vocab_size);

// Most frequent first; ties broken by the token's bytes so the result is deterministic.
// Level "spm" needs `spm` (the pieces it cuts are counted like words).
CharVocab build_vocab(const std::vector<std::string>& texts, const VocabOptions& o,
                      std::shared_ptr<const Tokenizer> spm = nullptr);

// vocab.txt: the first line is "#level=char", "#level=word" or "#level=spm", then one token per
// line. With spm, the SentencePiece model is written to / read from spm.model in the same folder.
void save_vocab(const CharVocab& v, const std::string& path);
CharVocab load_vocab(const std::string& path);

}  // namespace attn::data
