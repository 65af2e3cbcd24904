// attn attend --model M --src "..." [--tgt "..."] [--output page.html] [--format html|svg|json]
//             [--layer L] [--head H] [--ids] [--beam K]
// Every attention weight of a model on one sentence: the library's document (attend/attend.h),
// drawn as a page or SVG, or written as JSON.
#include <cstdio>
#include <optional>

#include "args.h"
#include "attn/attend/attend.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/model_dir.h"
#include "attn/runtime.h"

namespace attn::cli {
namespace {

struct AttendFlags {
  AttendRequest request;
  std::string output, format = "html";
  int threads = 1;
};

bool parse_flags(int argc, char** argv, AttendFlags& flags) {
  AttendRequest& f = flags.request;
  CLI::App args{"Writes every attention weight of a model on one sentence: a self-contained HTML page (hover or\n"
                "click a token to see where it attends; heatmaps of every layer and head; a per-head summary), a\n"
                "static SVG of the heatmaps, or JSON. Translation models: encoder self-attention, masked decoder\n"
                "self-attention and encoder-decoder attention over --tgt, or over the model's own translation\n"
                "(--beam) when --tgt is absent; RNN models: the attention over the source at each step;\n"
                "classifiers: the encoder's self-attention and the predicted label.",
                "attn attend"};
  describe(args, "attn attend --model runs/ende --src \"The animal didn't cross the street because it was too "
                 "tired\" --output animal.html");
  add_model(args, f.model, "model directory: a translation model or a classifier");
  args.add_option("--src", f.src, "the source sentence (or the classifier's text)")->required();
  args.add_option("--tgt", f.tgt, "the target, teacher-forced (default: the model's own translation)");
  add_text(args, "--output", flags.output, "file to write (default: standard output)");
  args.add_option("--format", flags.format, "html (default), svg or json");
  add_int(args, "--layer", f.layer, 0, 1 << 16, "only this layer, 1-based (0: all)");
  add_int(args, "--head", f.head, 0, 1 << 16, "only this head, 1-based (0: all)");
  args.add_flag("--ids", f.ids, "--src and --tgt are space-separated token ids (no eos added)");
  f.search.beam = 1;  // greedy unless asked
  add_beam(args, f.search.beam);
  add_threads(args, flags.threads, "1");
  if (!parse(args, argc, argv)) return false;
  check(flags.format == "html" || flags.format == "svg" || flags.format == "json",
        "--format must be html, svg or json, got '", flags.format, "'");
  return true;
}

// The document of the model directory `f.model`, loaded in fp32.
nlohmann::json attend_doc(const AttendRequest& f) {
  const nlohmann::json cfg = read_json_file(f.model + "/config.json");
  if (cfg.value("task", "") == "classification") {
    check(!f.ids, "--ids applies to translation models; a classifier reads text");
    ClassifierModel m = load_classifier(f.model);
    prepare(m.model, Precision::fp32, Use::inference);
    return classifier_doc(m, f);
  }
  std::optional<TranslationModel> text_model;
  if (!f.ids) text_model.emplace(load_translation_model(f.model));
  Seq2Seq m = f.ids ? load_seq2seq(f.model) : text_model->model;
  prepare(m, Precision::fp32, Use::inference);
  return translation_doc(m, f.ids ? Tokenizers{} : text_model->tokenizers, f);
}

}  // namespace

int run_attend(int argc, char** argv) {
  AttendFlags f;
  if (!parse_flags(argc, argv, f)) return 0;
  set_threads(f.threads);
  const nlohmann::json doc = attend_doc(f.request);
  const std::string text = f.format == "json"  ? doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                           : f.format == "svg" ? attend_svg(doc)
                                               : attend_html(doc);
  if (f.output.empty()) std::fputs(text.c_str(), stdout);
  else io::write_file_atomic(f.output, text);
  return 0;
}

}  // namespace attn::cli
