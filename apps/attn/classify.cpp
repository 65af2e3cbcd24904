// attn classify --model M [--top-k K] [--batch N] [--threads N] [--precision fp32|bf16|int8] < texts > labels
// One text a line in; one line out per text: "label<TAB>probability", or with --top-k K the K
// most probable as "label<TAB>prob<TAB>label<TAB>prob...". A line of label<TAB>text is not
// treated specially: the whole line is the text. A blank line gives an empty line.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "args.h"
#include "attn/classify/classify.h"
#include "attn/data/text_file.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/classifier_dir.h"
#include "attn/runtime.h"

namespace attn::cli {

namespace {

// Prints a line per text; a blank text (no sentence, data/text_file.h) gets an empty line.
void write_batch(const ClassifierModel& m, const std::vector<std::string>& texts, int64_t k) {
  for (const auto& top : classify_texts(m, texts, k)) {
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
  int top_k = 1, batch = 256, threads = 2;
  add_model(args, model, "classifier directory (attn train with task classification)");
  add_int(args, "--top-k", top_k, 1, kMaxTopK, "print the K most probable labels (at most the model's labels)");
  add_batch(args, batch, "texts per forward pass");
  add_threads(args, threads, "2");
  add_precision(args, precision_flag);
  if (!parse(args, argc, argv)) return 0;
  set_threads(threads);
  ClassifierModel m = load_classifier(model);
  prepare(m.model, model_precision(precision_flag, model), Use::inference);  // weights converted once
  int64_t k = std::min<int64_t>(top_k, static_cast<int64_t>(m.labels.size()));
  std::vector<std::string> texts;
  std::string line;
  int64_t number = 0;
  while (std::getline(std::cin, line)) {
    data::clean_stream_line(line, ++number, "<stdin>");
    texts.push_back(line);
    if (texts.size() == static_cast<size_t>(batch)) {
      write_batch(m, texts, k);
      texts.clear();
    }
  }
  if (!texts.empty()) write_batch(m, texts, k);
  return 0;
}

}  // namespace attn::cli
