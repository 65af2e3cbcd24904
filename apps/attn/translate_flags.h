// The options of attn translate as its command line gives them, and the models they name: parsed
// and loaded here for the binary and for the Python module (python/src/translator.cpp), which
// passes its keyword arguments through the same parser, so both decode alike and fail alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attn/decode/search.h"
#include "attn/decode/shortlist.h"
#include "attn/decode/text.h"
#include "attn/models/seq2seq.h"
#include "translate_output.h"
#include "translate_run.h"

namespace attn::cli {

// The command line of attn translate.
struct TranslateFlags {
  std::vector<std::string> models;
  std::string weights, precision, on_long = "split", seed = "0";
  bool ids = false;
  int threads = 0, batch = 32, batch_tokens = 0;  // threads 0: all cores
  SearchOptions search;
  OutputOptions output;
  std::string input, output_path, prefix, shortlist;
};

// attn translate's options under CTranslate2's keyword names, as the Python module takes them
// (attn.Translator) and attn serve's JSON body: each name, the flag it stands for, and the JSON
// type of its value. Both pass the values through parse_translate_flags, so they are checked
// exactly as the command line's.
struct OptionName {
  enum class Type { whole, real, text };
  std::string name, flag;
  Type type;
};
const std::vector<OptionName>& translate_option_names();

// Parses and checks argv (argv[0]: the command's name). False when --help was asked for; a bad
// flag or combination throws attn::Error naming it.
bool parse_translate_flags(int argc, char** argv, TranslateFlags& f);

// Every --model, prepared for inference at --precision; in text mode the first one's tokenizer
// (the others' must be the same).
struct TranslateModels {
  std::vector<Seq2Seq> models;
  std::optional<TranslationModel> text;  // empty with --ids
  std::optional<Shortlist> shortlist;     // --shortlist
};
TranslateModels load_translate_models(const TranslateFlags& f);

// --max-len must fit in the model's positions (`dir`: the model, named in the message).
void check_max_len(int max_len, const Seq2Seq& model, const std::string& dir);

// The job of flags `f` over models `t` (which it points into and must outlive it).
TranslateJob make_translate_job(const TranslateFlags& f, const TranslateModels& t);

}  // namespace attn::cli
