// The configuration keys of `attn train`, one table per task. Each key sets one field of the
// run's settings: the trainer's options struct (include/attn/train/) or the process settings
// beside it. Its default is that field's default initialiser (config.h).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "attn/train/classification_trainer.h"
#include "attn/train/translation_trainer.h"
#include "attn/train/config_file.h"

namespace attn {

// The model.* keys of a translation run. Both families' keys are one namespace: the keys they
// share (d_model, layers, dropout, max_len, tie_output, score) set `transformer`'s fields, which
// the RNN's config copies; each family's own keys are an error for the other (model_config).
struct ModelKeys {
  ModelKind type = ModelKind::transformer;
  std::string size = "auto";  // model.size: auto or a name of train/model_size.h's ladder
  TransformerConfig transformer = std::get<TransformerConfig>(TranslationTrainOptions{}.model);
  RnnConfig rnn;  // its own fields only: cell, bidirectional, encoder_hidden, input_feeding
};

// What `attn train` sets for a task: the trainer's options, and the threads and precision of the
// process (applied before training starts).
struct TranslationRun {
  TranslationTrainOptions o;  // o.model is made from `model` by load_translation_run
  ModelKeys model;
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

}  // namespace attn
