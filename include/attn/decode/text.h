// A translation model directory with its tokenizers. Translating text is the Translator's
// (translate/translator.h).
//
// config.json's "tokenizer" is either the SentencePiece model both sides share (attn's models:
// "spm.model"), or, for a model imported from another toolkit, an object naming each side's
// SentencePiece model and vocabulary (data/piece_vocabulary.h) and the vocabulary's rules:
//   "tokenizer": {"source": {"sentencepiece": "source.spm", "vocabulary": "vocab.json"},
//                 "target": {"sentencepiece": "target.spm", "vocabulary": "vocab.json"},
//                 "specials": ["</s>", "<unk>", "<pad>"], "unk": "<unk>",
//                 "language_codes": true, "clean_up_spaces": false, "source_eos": true}
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/tokenizer.h"
#include "attn/models/seq2seq.h"

namespace attn {

// The tokenizers of a translation model: the same one on both sides when the vocabulary is shared
// (attn's models), null for a model that reads and writes token ids only.
struct Tokenizers {
  std::shared_ptr<const data::Tokenizer> source, target;
  // Whether a source's ids end with eos: attn's models and OPUS-MT's (MarianTokenizer appends it)
  // do; an Argos package's OpenNMT models do not ("source_eos": false in the tokenizer entry).
  bool source_eos = true;
  explicit operator bool() const { return source != nullptr; }
};

struct TranslationModel {
  Seq2Seq model;  // either family (config.json's "model")
  Tokenizers tokenizers;
};

// The files config.json's "tokenizer" names (none without one), for copying a model directory.
std::vector<std::string> tokenizer_files(const nlohmann::json& config);

// The tokenizers config.json (`config`, read from `dir`) names; an error naming the file and the
// entry when it names none or a bad one.
Tokenizers load_tokenizers(const std::string& dir, const nlohmann::json& config);

// Reads DIR/config.json, DIR/model.safetensors and the tokenizers config.json names, and checks
// that their vocabularies fit the model's.
TranslationModel load_translation_model(const std::string& dir);

}  // namespace attn
