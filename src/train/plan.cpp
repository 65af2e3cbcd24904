// The run a config file and overrides describe (train/plan.h), for attn train and attn.train.
#include "attn/train/plan.h"

#include <cstdio>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/yaml.h"
#include "attn/kernels/precision.h"
#include "attn/runtime.h"
#include "attn/train/classification_trainer.h"
#include "attn/train/distributed.h"
#include "attn/train/stop_signal.h"
#include "attn/train/translation_trainer.h"

namespace attn {
namespace {

using nlohmann::json;

}  // namespace

std::string requested_task(const std::string& config_path, const std::vector<Override>& sets) {
  std::string task = "translation";
  if (!config_path.empty()) {
    json j = io::parse_yaml(io::read_file(config_path), config_path);
    if (j.is_object() && j.contains("task") && j["task"].is_string()) task = j["task"].get<std::string>();
  }
  for (const Override& o : sets)
    if (o.key_value.rfind("task=", 0) == 0) task = o.key_value.substr(5);
  check(task == "translation" || task == "classification", "task '", task, "' is not known (translation, classification)");
  return task;
}

void train_on_every_rank(const Communicator& comm, TrainPlan& plan) {
  try {
    plan.classification.o.comm = plan.translation.o.comm = comm;
    run_training(plan);
  } catch (const std::exception& e) {
    if (!comm.distributed()) throw;
    std::fprintf(stderr, "attn train: rank %d of %d: error: %s; ending every rank\n", comm.rank, comm.size, e.what());
    comm.abort(1);
  }
}

TrainPlan plan_training(const std::string& config, std::vector<Override> sets, bool resume, bool speak) {
  for (Override& o : sets)  // --set model=rnn: the model family (model.* are its settings)
    if (o.key_value.rfind("model=", 0) == 0) o.key_value = "model.type=" + o.key_value.substr(6);
  TrainPlan plan;
  plan.task = requested_task(config, sets);
  const bool cls = plan.task == "classification";
  if (cls) plan.classification = load_classification_run(config, sets);
  else plan.translation = load_translation_run(config, sets);
  const std::string precision_setting = cls ? plan.classification.precision : plan.translation.precision;
  set_threads(cls ? plan.classification.threads : plan.translation.threads);
  const Precision precision = parse_training_precision(precision_setting);
  if (!speak) {  // under mpirun, rank 0 alone speaks
  } else if (precision_setting == "auto")
    std::fprintf(stderr, "precision: %s (auto: this CPU %s bf16 natively)\n", precision_name(precision),
                 precision == Precision::bf16 ? "multiplies" : "does not multiply");
  else if (precision == Precision::bf16 && !onednn_has_bf16_matmul())
    std::fprintf(stderr, "precision: bf16 on a CPU without bf16 products: the bf16-rounded operands are "
                         "multiplied in f32 (bf16's numbers, f32's speed)\n");
  plan.classification.o.precision = plan.translation.o.precision = precision;
  plan.classification.o.resume = plan.translation.o.resume = resume;
  plan.model_dir = cls ? plan.classification.o.model_dir : plan.translation.o.model_dir;
  return plan;
}

void run_training(const TrainPlan& plan) {
  // OpenMP's thread count is per thread: the thread that trains (attn.train's own) gets the run's
  // count here, not only the one that planned it (issue 50: it used every core).
  set_threads(plan.task == "classification" ? plan.classification.threads : plan.translation.threads);
  if (plan.task == "classification") train_classifier(plan.classification.o);
  else train_translation(plan.translation.o);
}

}  // namespace attn
