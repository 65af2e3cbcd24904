// attn translate's command line: the flags of its own (models, files, formats) and every option of
// translate/options.h's table as a flag, parsed into the library's typed TranslateOptions.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/translate/options.h"
#include "attn/translate/translator.h"

namespace attn::cli {

struct TranslateFlags {
  std::vector<std::string> models;
  std::string weights, precision;
  bool ids = false;
  int threads = 0;  // 0: all cores
  bool jsonl = false;  // --output-format jsonl
  std::string input, output_path, prefix, shortlist;
  TranslateOptions options;
};

// attn translate's flag for an option ("--beam"), the name its messages give it.
std::string flag_name(const OptionField& f);

// Every option of the table that the command line takes, as a flag of `app` whose value `b` sets
// (checked by the library as it is set).
void add_option_flags(CLI::App& app, TranslateOptionsBuilder& b);

// Parses and checks argv (argv[0]: the command's name). False when --help was asked for; a bad
// flag or combination throws attn::Error naming it.
bool parse_translate_flags(int argc, char** argv, TranslateFlags& f);

// The translator the flags name: --model(s), --weights, --precision, --ids, --shortlist.
TranslatorOptions translator_options(const TranslateFlags& f);

}  // namespace attn::cli
