// attn train --config FILE [--set key=value ...]: a config file and overrides, read through the
// keys of the task's table (train_config.h), then the task's trainer.
#include "attn/train/plan.h"

#include <cstdio>

#include "args.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/yaml.h"
#include "attn/kernels/precision.h"
#include "attn/runtime.h"
#include "attn/train/classification_trainer.h"
#include "attn/train/distributed.h"
#include "attn/train/stop_signal.h"
#include "attn/train/translation_trainer.h"

namespace attn::cli {
namespace {

// The command line of attn train.
struct TrainFlags {
  std::string config, max_steps, max_minutes, model_dir, precision;
  std::vector<std::string> sets;
  int threads = 0;  // 0: train.threads
  bool resume = false, help_config = false;
};

constexpr const char* kTrainHelp =
    "Trains a model from a config file (YAML or JSON) and --set overrides.\n"
    "Without --config the defaults train an English->German model on the\n"
    "shipped corpus (scripts/data.sh unpacks it into data/mt-ende). attn train\n"
    "--help-config lists every key; with --set task=classification (or task:\n"
    "classification in the config) it trains seed 002's text classifier.\n"
    "Under mpirun it trains data-parallel, one share of each global batch per\n"
    "rank (docs/distributed.md), e.g.\n"
    "  mpirun -np 2 attn train --threads 1 --set train.accumulate=2 ...";

}  // namespace

int run_train(int argc, char** argv) {
  CLI::App args{kTrainHelp, "attn train"};
  describe(args, "attn train --model-dir runs/ende --max-minutes 60 --set train.warmup=800");
  TrainFlags f;
  add_text(args, "--config", f.config, "YAML or JSON config file");
  add_repeated(args, "--set", f.sets, "key=value override, e.g. --set train.warmup=800 (repeatable)");
  add_text(args, "--max-steps", f.max_steps, "shortcut for --set train.max_steps=N");
  add_text(args, "--max-minutes", f.max_minutes, "shortcut for --set train.max_minutes=M");
  add_text(args, "--model-dir", f.model_dir, "shortcut for --set model_dir=DIR");
  add_threads(args, f.threads, "2, train.threads");
  add_text(args, "--precision", f.precision, "shortcut for --set train.precision=fp32|bf16|auto");
  args.add_flag("--resume", f.resume, "continue exactly from the newest readable checkpoint (changed model.* settings "
                                      "are refused; with no checkpoint a new run starts and says so)");
  args.add_flag("--help-config", f.help_config, "list every configuration key with its default and meaning");
  if (!parse(args, argc, argv)) return 0;
  std::vector<Override> sets(f.sets.begin(), f.sets.end());
  // The shortcuts are overrides after the --set ones, checked by the key's own rule, named in errors.
  if (!f.max_steps.empty()) sets.push_back({"train.max_steps=" + f.max_steps, "--max-steps"});
  if (!f.max_minutes.empty()) sets.push_back({"train.max_minutes=" + f.max_minutes, "--max-minutes"});
  if (!f.model_dir.empty()) sets.push_back({"model_dir=" + f.model_dir, "--model-dir"});
  if (f.threads > 0) sets.push_back({"train.threads=" + std::to_string(f.threads), "--threads"});
  if (!f.precision.empty()) sets.push_back({"train.precision=" + f.precision, "--precision"});
  std::string task = requested_task(f.config, sets);
  if (f.help_config) {
    std::printf("task: %s\n%s", task.c_str(), describe_defaults(task).c_str());
    return 0;
  }
  const Communicator comm = join_world();  // mpirun -np N: data-parallel (docs/distributed.md)
  TrainPlan plan = plan_training(f.config, sets, f.resume, comm.leader());
  install_stop_handlers();  // SIGINT, SIGTERM: a checkpoint after the step, exit 0 (a second: at once)
  if (comm.distributed() && comm.leader())
    std::fprintf(stderr, "data-parallel: %d ranks of %d threads; rank 0 writes the logs, checkpoints and model\n",
                 comm.size, plan.task == "classification" ? plan.classification.threads : plan.translation.threads);
  train_on_every_rank(comm, plan);
  return 0;
}

}  // namespace attn::cli
