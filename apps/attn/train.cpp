// attn train --config FILE [--set key=value ...]: a config file and overrides, read through the
// keys of the task's table (train_config.h), then the task's trainer.
#include <cstdio>

#include "args.h"
#include "train_config.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/yaml.h"
#include "attn/kernels/precision.h"
#include "attn/runtime.h"
#include "attn/train/classification_trainer.h"
#include "attn/train/translation_trainer.h"

namespace attn::cli {
namespace {

using nlohmann::json;

// The task a command line asks for: --set task=..., else the config file's task key.
std::string requested_task(const std::string& config_path, const std::vector<std::string>& sets) {
  std::string task = "translation";
  if (!config_path.empty()) {
    json j = io::parse_yaml(io::read_file(config_path), config_path);
    if (j.is_object() && j.contains("task") && j["task"].is_string()) task = j["task"].get<std::string>();
  }
  for (const std::string& s : sets)
    if (s.rfind("task=", 0) == 0) task = s.substr(5);
  check(task == "translation" || task == "classification", "task '", task, "' is not known (translation, classification)");
  return task;
}

}  // namespace

int run_train(int argc, char** argv) {
  Args args("train", "Trains a model from a config file (YAML or JSON) and --set overrides.\n"
                     "Without --config the defaults train an English->German model on the\n"
                     "shipped corpus (scripts/data.sh unpacks it into data/mt-ende). attn train\n--help-config lists every key; with --set task=classification (or task:\nclassification in the config) it trains seed 002's text classifier.");
  args.option("config", "YAML or JSON config file")
      .repeated("set", "key=value override, e.g. --set train.warmup=800 (repeatable)")
      .option("max-steps", "shortcut for --set train.max_steps=N")
      .option("max-minutes", "shortcut for --set train.max_minutes=M")
      .option("model-dir", "shortcut for --set model_dir=DIR")
      .option("threads", "shortcut for --set train.threads=N")
      .option("precision", "shortcut for --set train.precision=fp32|bf16|auto")
      .flag("resume", "continue from the newest checkpoint in model_dir, exactly")
      .flag("help-config", "list every configuration key with its default and meaning");
  if (!args.parse(argc, argv)) return 0;
  std::vector<std::string> sets = args.all("set");
  if (args.has("max-steps")) sets.push_back("train.max_steps=" + args.str("max-steps"));
  if (args.has("max-minutes")) sets.push_back("train.max_minutes=" + args.str("max-minutes"));
  if (args.has("model-dir")) sets.push_back("model_dir=" + args.str("model-dir"));
  if (args.has("threads")) sets.push_back("train.threads=" + args.str("threads"));
  if (args.has("precision")) sets.push_back("train.precision=" + args.str("precision"));
  for (std::string& s : sets)  // --set model=rnn: the model family (model.* are its settings)
    if (s.rfind("model=", 0) == 0) s = "model.type=" + s.substr(6);
  std::string task = requested_task(args.str("config"), sets);
  if (args.on("help-config")) {
    std::printf("task: %s\n%s", task.c_str(), describe_defaults(task).c_str());
    return 0;
  }
  TranslationRun translation;
  ClassificationRun classification;
  if (task == "classification") classification = load_classification_run(args.str("config"), sets);
  else translation = load_translation_run(args.str("config"), sets);
  const bool cls = task == "classification";
  const std::string precision_setting = cls ? classification.precision : translation.precision;
  set_threads(cls ? classification.threads : translation.threads);
  const Precision precision = parse_training_precision(precision_setting);
  if (precision_setting == "auto")
    std::fprintf(stderr, "precision: %s (auto: this CPU %s bf16 natively)\n", precision_name(precision),
                 precision == Precision::bf16 ? "multiplies" : "does not multiply");
  else if (precision == Precision::bf16 && !onednn_has_bf16_matmul())
    std::fprintf(stderr, "precision: bf16 on a CPU without bf16 products: the bf16-rounded operands are "
                         "multiplied in f32 (bf16's numbers, f32's speed)\n");
  PrecisionScope precision_scope(precision);
  if (cls) {
    classification.o.resume = args.on("resume");
    train_classifier(classification.o);
    return 0;
  }
  translation.o.resume = args.on("resume");
  train_translation(translation.o);
  return 0;
}

}  // namespace attn::cli
