// A translation model directory with its SentencePiece tokenizer. Translating text is the
// Translator's (translate/translator.h).
#pragma once

#include <string>
#include <vector>

#include "attn/data/tokenizer.h"
#include "attn/models/seq2seq.h"

namespace attn {

struct TranslationModel {
  Seq2Seq model;  // either family (config.json's "model")
  data::Tokenizer tokenizer;  // shared by source and target
};

// Reads DIR/config.json, DIR/model.safetensors and the tokenizer config.json names.
TranslationModel load_translation_model(const std::string& dir);

}  // namespace attn
