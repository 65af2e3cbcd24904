// attn average: the mean of the last K checkpoints as a model (the paper averages the last 5, §6.1),
// for the Transformer and the RNN encoder-decoder alike, and for classifiers.
#include <cstdio>
#include <filesystem>

#include "args.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/train/checkpoint.h"

namespace attn::cli {

int run_average(int argc, char** argv) {
  CLI::App args{"Averages the parameters of the newest K checkpoints of MODEL_DIR (as the\n"
                "paper does with the last 5) and writes a model directory to --out.",
                "attn average"};
  describe(args, "attn average runs/ende --last 5 --out runs/ende-avg5");
  std::string dir, out;
  int last = 5;
  args.add_option("MODEL_DIR", dir, "a training directory of a translation model or a classifier (holds config.json and checkpoints/)")->required();
  add_int(args, "--last", last, 1, 1 << 20, "how many of the newest checkpoints");
  bool force = false;
  add_text(args, "--out", out, "model directory to write (default: MODEL_DIR/averaged)");
  args.add_flag("--force", force, "replace the model already in --out (MODEL_DIR itself holds the best model)");
  if (!parse(args, argc, argv)) return 0;
  if (out.empty()) out = dir + "/averaged";
  // A model directory's model is the run's best (or final) one: replacing it is never silent.
  const bool replaces = std::filesystem::exists(out + "/model.safetensors");
  if (replaces && !force)
    fail("average: ", out, " already holds a model (", out, "/model.safetensors",
         std::filesystem::equivalent(out, dir) ? ", the run's best model" : "",
         "); write elsewhere with --out, or pass --force to replace it");
  if (replaces) std::fprintf(stderr, "--force: replacing the model in %s\n", out.c_str());
  auto all = list_checkpoints(dir);
  check(!all.empty(), dir, ": no checkpoints in ", dir, "/checkpoints");
  std::vector<std::string> chosen(all.end() - std::min<size_t>(all.size(), last), all.end());
  nlohmann::json config = read_json_file(dir + "/config.json");
  std::map<std::string, Tensor> mean = average_checkpoints(chosen);
  const std::string source = dir + "/checkpoints";
  if (config.is_object() && config.value("task", "") == "classification") {
    // A classifier (attn train --task classify): its vocabulary and labels, the averaged weights.
    ClassifierModel m = load_classifier(dir);
    m.model = classifier_from_tensors(m.model.config, std::move(mean), source);
    save_classifier(m, out, {{"training", {{"averaged", chosen}}}});
    std::fprintf(stderr, "averaged %zu checkpoints (%s .. %s) of a classifier into %s\n", chosen.size(),
                 chosen.front().c_str(), chosen.back().c_str(), out.c_str());
    return 0;
  }
  Seq2SeqConfig c = seq2seq_config_from_json(config, dir + "/config.json");
  // Either family (config.json's "model"): the averaged tensors are checked against its parameters.
  Seq2Seq m = seq2seq_from_tensors(c, std::move(mean), source);
  nlohmann::json extra = nlohmann::json::object();
  if (config.contains("tokenizer")) {
    std::filesystem::create_directories(out);
    for (const std::string& tok : tokenizer_files(config))
      io::write_file_atomic(out + "/" + tok, io::read_file(dir + "/" + tok));
    extra["tokenizer"] = config["tokenizer"];
  }
  extra["training"] = {{"averaged", chosen}};
  save_seq2seq(m, out, extra);
  std::fprintf(stderr, "averaged %zu checkpoints (%s .. %s) into %s\n", chosen.size(), chosen.front().c_str(),
               chosen.back().c_str(), out.c_str());
  return 0;
}

}  // namespace attn::cli
