// A model's own defaults of the translation options: config.json's "translate_defaults", an
// object of option keys (translate/options.h's, CTranslate2's names) and values, e.g. what
// `attn import` reads from an OPUS-MT model's generation_config.json:
//   "translate_defaults": {"search_rules": "transformers", "beam_size": 4, "length_penalty": 1.0,
//                          "eos_at_max_len": true, "max_decoding_length": 511}
// Every front end starts a model's options from them (TranslateOptionsBuilder::defaults_from):
// an option given on the command line, in Python or in JSON wins; the others are the model's, then
// TranslateOptions{}'s.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "attn/translate/options.h"

namespace attn {

// The defaults `config` (read from `source`) holds; TranslateOptions{} when it holds none. A key
// that is not an option, or a value out of its range, is an error naming the file and the key.
TranslateOptions translate_defaults(const nlohmann::json& config, const std::string& source);
// The same from dir/config.json.
TranslateOptions translate_defaults(const std::string& dir);

}  // namespace attn
