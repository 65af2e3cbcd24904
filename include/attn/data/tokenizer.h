// Subword tokenisation with SentencePiece (Kudo & Richardson, 2018): a shared unigram or BPE
// vocabulary, trained on the training text and stored as `prefix.model` / `prefix.vocab`.
//
// attn's special ids are fixed for every model it trains or loads:
//   pad = 0 "<pad>", bos = 1 "<s>", eos = 2 "</s>", unk = 3 "<unk>".
// encode() adds neither bos nor eos: the batcher places them (source x + eos, target
// bos + y -> y + eos).
//
// SentencePiece collapses runs of spaces and trims the ends (and, with an NFKC rule, folds
// compatibility characters), so decode(encode(s)) == s for ordinary lines, not for every string.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/data/piece_vocabulary.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attn::data {

constexpr int32_t kPadId = 0;
constexpr int32_t kBosId = 1;
constexpr int32_t kEosId = 2;
constexpr int32_t kUnkId = 3;

struct TokenizerTrainOptions {
  std::vector<std::string> inputs;  // text files, one sentence a line (UTF-8; empty lines skipped)
  std::string model_prefix;         // writes model_prefix.model and model_prefix.vocab
  int vocab_size = 8000;
  std::string model_type = "unigram";  // "unigram" or "bpe"
  double character_coverage = 1.0;     // 1.0 suits European languages (0.9995 for CJK)
  int64_t input_sentence_size = 0;     // cap on lines used, sampled with `seed`; 0 = all
  uint64_t seed = 1;  // for that sampling (attn's own: SentencePiece 0.1.97's ignores seeds)
  int threads = 2;  // unigram models differ (slightly) with the thread count
  // Always one piece each, e.g. "%s", matched anywhere (a space before one becomes a piece "▁"
  // of its own, so on mt-ende they make sequences no shorter).
  std::vector<std::string> user_defined_symbols;
  // SentencePiece's normalisation rule: "identity" (attn's default), "nmt_nfkc" (SentencePiece's
  // default), "nfkc", ... With identity, decoding gives back the corpus' own characters: NFKC
  // turns "…" (in 1,141 lines of mt-ende's training text) into "...", which the references
  // do not contain. Runs of spaces are collapsed either way.
  std::string normalization = "identity";
  bool verbose = false;  // SentencePiece's own log on stderr
};

class Tokenizer {
 public:
  // Loads `path` (a .model file); the error names the file. Checks attn's special ids.
  static Tokenizer load(const std::string& path);
  // From the bytes of a .model file (e.g. kept inside a checkpoint); `name` is for errors.
  static Tokenizer from_serialized(const std::string& bytes, const std::string& name = "<bytes>");
  // A SentencePiece model (`spm_path`) read through a vocabulary of its own (an imported model's:
  // data/piece_vocabulary.h), whose ids and rules are the vocabulary's; attn's special ids do not
  // apply.
  static Tokenizer with_vocabulary(const std::string& spm_path, PieceVocabulary vocabulary, VocabularyRules rules);
  // Trains a model with attn's special ids and writes model_prefix.{model,vocab}.
  static void train(const TokenizerTrainOptions& options);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  std::vector<int32_t> encode(std::string_view text) const;  // no bos/eos
  std::vector<std::string> encode_pieces(std::string_view text) const;
  std::string decode(const std::vector<int32_t>& ids) const;  // pad/bos/eos (the specials) decode to nothing
  int32_t vocab_size() const;
  std::string piece(int32_t id) const;
  int32_t piece_to_id(const std::string& piece) const;  // the unknown token's id when not in the vocabulary
  std::string serialized() const;  // the .model bytes
  const std::string& name() const { return name_; }
  // The vocabulary of its own, null when the ids are the SentencePiece model's.
  const PieceVocabulary* vocabulary() const { return vocabulary_ ? &*vocabulary_ : nullptr; }
  // Whether both cut text the same way into the same ids (an ensemble's members must).
  bool same_as(const Tokenizer& other) const;

 private:
  Tokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp, std::string name);
  std::vector<int32_t> encode_with_vocabulary(std::string_view text) const;
  std::string decode_with_vocabulary(const std::vector<int32_t>& ids) const;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::string name_;  // the file it came from, for errors
  std::optional<PieceVocabulary> vocabulary_;
  VocabularyRules rules_;
};

}  // namespace attn::data
