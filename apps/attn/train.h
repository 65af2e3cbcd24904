// attn train once its command line is read: the run a config file and overrides describe, and
// the training itself. The binary and the Python module (attn.train) both go through these.
#pragma once

#include <string>
#include <vector>

#include "config.h"
#include "train_config.h"

namespace attn::cli {

// A checked run of either task, its process settings (threads) already applied.
struct TrainPlan {
  std::string task;  // "translation" or "classification"
  TranslationRun translation;
  ClassificationRun classification;
  std::string model_dir;  // where the run writes (train_log.jsonl: its progress and validation events)
};

// The run of config file `config` (may be empty) and `sets` (key=value, as --set; the shortcuts
// of the command line already turned into keys; model=F is model.type=F); sets the threads and, if
// `speak`, says the precision on stderr (under mpirun rank 0 alone speaks).
TrainPlan plan_training(const std::string& config, std::vector<Override> sets, bool resume, bool speak = true);

// Trains to the end of the budget, or to a stop asked for (train/stop_signal.h): a checkpoint, then return.
void run_training(const TrainPlan& plan);

}  // namespace attn::cli
