// Training the seed-002 classifier (`attn train` with task: classification): vocabulary from the
// training set, Adam with a constant rate (seed: 5e-4) or a schedule, batches of 128 texts, dev
// loss and accuracy every `validate_every` batches and at the end of each epoch, the best model
// (lowest dev loss, as the seed) kept in model_dir, early stopping when the dev loss has not
// improved for `patience` batches (seed: require_improvement 1000), checkpoints and exact resume,
// progress on stderr and in train_log.jsonl.
#pragma once

#include <cstdint>
#include <string>

#include "attn/data/char_vocab.h"
#include "attn/models/classifier.h"
#include "attn/train/adam.h"
#include "attn/train/checkpoint.h"
#include "attn/train/distributed.h"
#include "attn/train/schedule.h"
#include "attn/train/progress.h"

namespace attn {

// The defaults are seed 002's configuration, `attn train --set task=classification`'s recipe (its
// --help-config prints them from these initialisers).
struct ClassificationTrainOptions {
  std::string model_dir = "runs/cls";
  std::string train = "data/cls-zh-poetry/train.tsv";  // label<TAB>text files; dev may be empty
  std::string dev = "data/cls-zh-poetry/dev.tsv";
  data::VocabOptions vocab;       // level char | word | spm (spm.model trained into model_dir)
  std::string embeddings;         // pre-trained table (.npz or word2vec text); empty: none
  ClassifierConfig model;         // vocab and classes are filled from the data
  int64_t batch = 128;
  LrSchedule schedule{"constant", 1.0, 5e-4, 0, 300};
  AdamOptions adam{0.9f, 0.999f, 1e-8f, 0.0f};  // torch.optim.Adam's defaults, as the seed
  double clip_norm = 0.0;
  double ema_decay = 0.0;  // a moving average of the weights (train/ema.h), validated and saved; 0: none
  float label_smoothing = 0.0f;   // eps of the training loss (PyTorch's definition); dev loss is plain NLL
  int64_t max_epochs = 20, max_steps = 0;
  double max_minutes = 0.0;
  BudgetClock clock = BudgetClock::wall;  // what max_minutes (and elapsed) count: wall or CPU time
  int64_t validate_every = 100;   // batches (0: at the end of each epoch only; seed: 100)
  int64_t patience = 1000;        // batches without a better dev loss before stopping (0: never; seed: 1000)
  int64_t log_every = 50;
  int64_t checkpoint_every = 0;   // batches (0: at the end of each epoch)
  int keep_checkpoints = kKeepCheckpoints;
  int64_t max_bad_steps = 5;      // NaN/Inf steps in a row (each skipped) that end the run with an error
  uint64_t seed = 1;
  Precision precision = Precision::fp32;  // of the products in training (fp32 or bf16); validation runs in fp32
  bool resume = false;
  // The ranks of a data-parallel run (train/distributed.h); one process by default.
  Communicator comm;
  AllreduceOptions allreduce;
};

// Summary of a finished run (also written to config.json's "training").
struct ClassificationTrainResult {
  int64_t steps = 0, epochs = 0;
  double best_dev_loss = 0, best_dev_accuracy = 0, seconds = 0, samples_per_second = 0;
};

ClassificationTrainResult train_classifier(const ClassificationTrainOptions& o);

}  // namespace attn
