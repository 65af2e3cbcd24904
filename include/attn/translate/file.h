// Translation of a file or stream, line by line (attn translate, attn.Translator.translate_file):
// lines from standard input or a file (and a file of target prefixes), each cut to fit the model
// with a warning on stderr, translated a window at a time by the Translator, and written in input
// order to standard output or, atomically at the end, to a file; lines done, rate and ETA on
// stderr when asked. Every input line gives its output line.
#pragma once

#include <functional>
#include <string>

#include "attn/translate/options.h"
#include "attn/translate/translator.h"

namespace attn {

struct TranslateFile {
  bool text = true;           // text in and out (false: token ids, --ids)
  bool jsonl = false;         // one JSON object a line (--output-format jsonl)
  std::string input, output;  // empty: standard input / output
  std::string prefix_path;    // --prefix: a target prefix per input line (empty: none)
  bool progress = false;      // lines done, rate and ETA on stderr
  // Runs after each window but the last: a caller's chance to stop the work (Python raises
  // KeyboardInterrupt from it); nothing is written to an --output file then.
  std::function<void()> between;
};

// Translates every input line; returns the process's exit code.
int translate_file(const Translator& t, const TranslateOptions& o, const TranslateFile& run);

}  // namespace attn
