// Argos Translate packages (.argosmodel, what LibreTranslate runs) read as attn models. A package
// is a zip of one directory holding
//   metadata.json        {"from_code": "en", "from_name": "English", "to_code": "de",
//                         "to_name": "German", "package_version": ..., ...}
//   model/               a CTranslate2 directory (models/ct2.h)
//   sentencepiece.model  the SentencePiece model of both sides
//   stanza/              its sentence splitter (not read: attn serve splits text itself)
// Argos translates as argostranslate/translate.py's apply_packaged_translation does: the
// source's pieces without eos, translate_batch with beam 4 and length penalty 0.2, the output
// pieces joined with "▁" as spaces. Those become the model's tokenizer rules and search defaults;
// the languages become its "languages" entry (what attn serve's LibreTranslate routes answer with).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "attn/models/ct2.h"

namespace attn {

// Whether `path` is a file whose name ends with .argosmodel.
bool is_argos_package(const std::string& path);

struct ArgosModel {
  Ct2Model model;           // files point into `work`
  nlohmann::json languages;  // {"source": {"code", "name"}, "target": {"code", "name"}}
  nlohmann::json metadata;   // metadata.json as the package has it
};
// Unpacks the package's model/ and sentencepiece.model into `work` (an existing directory) and
// reads them. Errors name the package and the member.
ArgosModel import_argos(const std::string& path, const std::string& work);

}  // namespace attn
