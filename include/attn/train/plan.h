// attn train once its command line is read: the run a config file and overrides describe, and
// the training itself. The binary and the Python module (attn.train) both go through these.
#pragma once

#include <string>
#include <vector>

#include "attn/train/config_file.h"
#include "attn/train/distributed.h"
#include "attn/train/run_config.h"

namespace attn {

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

// The task a run asks for: a --set task=..., else the config file's task key, else translation.
std::string requested_task(const std::string& config_path, const std::vector<Override>& sets);

// Runs the trainer on every rank. Under mpirun an error on one rank ends the whole job at once
// (MPI_Abort), named by its rank, instead of leaving the others waiting in a collective.
void train_on_every_rank(const Communicator& comm, TrainPlan& plan);

}  // namespace attn
