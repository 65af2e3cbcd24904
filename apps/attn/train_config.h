// The configuration keys of `attn train`, one table per task. Each key sets one field of the
// run's settings: the trainer's options struct (include/attn/train/) or the process settings
// beside it. Its default is that field's default initialiser (config.h).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "attn/train/classification_trainer.h"
#include "attn/train/translation_trainer.h"
#include "config.h"

namespace attn::cli {

// What `attn train` sets for a task: the trainer's options, and the threads and precision of the
// process (applied before training starts).
struct TranslationRun {
  TranslationTrainOptions o;
  int threads = 2;
  std::string precision = "auto";  // fp32, bf16 or auto (parse_training_precision)
};

struct ClassificationRun {
  ClassificationTrainOptions o;
  int threads = 2;
  std::string precision = "fp32";
};

const std::vector<ConfigKey<TranslationRun>>& translation_keys();
const std::vector<ConfigKey<ClassificationRun>>& classification_keys();

// The run a config file (may be empty) and --set overrides describe, checked key by key and as a
// whole (the model's fields together, a decay that needs a budget).
TranslationRun load_translation_run(const std::string& path, const std::vector<Override>& sets);
ClassificationRun load_classification_run(const std::string& path, const std::vector<Override>& sets);

// --help-config: the keys of a task ("translation" or "classification") with their defaults.
std::string describe_defaults(const std::string& task);

}  // namespace attn::cli
