// attn eval --model M --data dev.tsv [--json]: a classifier on label<TAB>text lines; prints
// accuracy, macro-F1, per-class precision / recall / F1 and the confusion matrix.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "args.h"
#include "attn/data/classification_data.h"
#include "attn/data/classification_metrics.h"
#include "attn/error.h"
#include "attn/models/classifier_dir.h"
#include "attn/runtime.h"

namespace attn::cli {

int run_eval(int argc, char** argv) {
  CLI::App args{"Evaluates a classifier on a label<TAB>text file.", "attn eval"};
  describe(args, "attn eval --model runs/cls --data data/cls-zh-poetry/test.tsv");
  std::string model, data_path;
  bool json = false;
  int threads = 2;
  add_model(args, model, "classifier directory");
  add_text(args, "--data", data_path, "label<TAB>text file")->required();
  add_threads(args, threads, "2");
  args.add_flag("--json", json, "print the figures as one JSON object");
  if (!parse(args, argc, argv)) return 0;
  set_threads(threads);
  ClassifierModel m = load_classifier(model);
  std::vector<data::LabelledText> rows = data::read_labelled(data_path);
  std::vector<int32_t> truth = data::label_ids(rows, m.labels, data_path);
  std::vector<std::string> texts;
  for (const auto& r : rows) texts.push_back(r.text);
  Tensor p = classifier_probabilities(m.model, encode_texts(m, texts));
  int64_t C = p.size(1);
  std::vector<int32_t> predicted;
  for (int64_t i = 0; i < p.size(0); ++i) {
    const float* row = p.data<float>() + i * C;
    predicted.push_back(static_cast<int32_t>(std::max_element(row, row + C) - row));
  }
  data::ClassificationReport r = data::classification_report(truth, predicted, C);
  if (json) {
    nlohmann::json j = {{"accuracy", r.accuracy}, {"macro_f1", r.macro_f1}, {"total", r.total},
                        {"confusion", r.confusion}, {"labels", m.labels}};
    for (size_t c = 0; c < r.classes.size(); ++c)
      j["classes"][m.labels[c]] = {{"precision", r.classes[c].precision}, {"recall", r.classes[c].recall},
                                   {"f1", r.classes[c].f1}, {"support", r.classes[c].support}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::fputs(data::format_report(r, m.labels).c_str(), stdout);
  }
  return 0;
}

}  // namespace attn::cli
