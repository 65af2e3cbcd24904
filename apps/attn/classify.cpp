// attn classify --model M [--top-k K] [--batch N] [--threads N] [--precision fp32|bf16|int8] < texts > labels
// One text a line in; one line out per text: "label<TAB>probability", or with --top-k K the K
// most probable as "label<TAB>prob<TAB>label<TAB>prob...". A line of label<TAB>text is not
// treated specially: the whole line is the text. A blank line gives an empty line.
// --top-k and --batch are the library's table of classification options (classify/options.h).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "attn/classify/classify.h"
#include "attn/classify/options.h"
#include "attn/data/text_file.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/classifier_dir.h"
#include "attn/runtime.h"

namespace attn::cli {

namespace {

// Prints a line per text; a blank text (no sentence, data/text_file.h) gets an empty line.
void write_batch(const ClassifierModel& m, const std::vector<std::string>& texts, const ClassifyOptions& o) {
  for (const auto& top : classify_texts(m, texts, o)) {
    std::string line;
    for (size_t j = 0; j < top.size(); ++j) {
      char num[32];
      std::snprintf(num, sizeof num, "%.4f", top[j].second);
      line += (j ? "\t" : "") + m.labels[top[j].first] + "\t" + num;
    }
    std::fputs((line + "\n").c_str(), stdout);
  }
}

}  // namespace

int run_classify(int argc, char** argv) {
  CLI::App args{"Reads text lines on stdin and prints label<TAB>probability for each (an empty line\n"
                "for a blank one, so that output line N is always input line N's).",
                "attn classify"};
  describe(args, "attn classify --model runs/cls --top-k 2 < poems.txt");
  std::string model, precision_flag;
  int threads = 2;
  add_model(args, model, "classifier directory (attn train with task classification)");
  ClassifyOptionsBuilder options(flag_of<ClassifyOptions>);
  add_option_flags(args, options, classify_option_fields());
  add_threads(args, threads, "2");
  add_precision(args, precision_flag);
  if (!parse(args, argc, argv)) return 0;
  const ClassifyOptions o = options.options();
  set_threads(threads);
  ClassifierModel m = load_classifier(model);
  prepare(m.model, model_precision(precision_flag, model), Use::inference);  // weights converted once
  // Standard input is read and answered a batch at a time, so output follows input as it comes.
  std::vector<std::string> texts;
  std::string line;
  int64_t number = 0;
  data::check_stdin_not_directory();
  while (std::getline(std::cin, line)) {
    data::clean_stream_line(line, ++number, "<stdin>");
    texts.push_back(line);
    if (static_cast<int64_t>(texts.size()) == o.batch) {
      write_batch(m, texts, o);
      texts.clear();
    }
  }
  if (!texts.empty()) write_batch(m, texts, o);
  return 0;
}

}  // namespace attn::cli
