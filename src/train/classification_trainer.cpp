#include "attn/train/classification_trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "attn/data/classification_data.h"
#include "attn/data/classification_embeddings.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/model_dir.h"
#include "attn/ops/loss.h"
#include "attn/train/checkpoint.h"
#include "attn/train/ema.h"
#include "attn/train/loop.h"
#include "attn/train/progress.h"

namespace attn {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Everything the training loop carries from batch to batch.
struct Run {
  const ClassificationTrainOptions& o;
  ClassifierModel cm;
  data::ClassificationSet train, dev;
  std::unique_ptr<Adam> adam;
  std::unique_ptr<GradientReducer> reducer;  // sums the gradients over the ranks
  double comm_seconds = 0;                   // of the latest step: waiting for the ranks' sums
  Rng rng{0};                 // dropout
  std::vector<int64_t> order;  // this epoch's permutation of the training rows
  int64_t epoch = 0, batch_in_epoch = 0;
  double best_loss = INFINITY, best_accuracy = 0;
  int64_t best_step = 0;
  LoopClock clock{0, 0.0, Stopwatch(o.clock)};  // train.clock: wall or this process's CPU time
  Ema ema = {};  // decay 0: none

  int64_t batches_per_epoch() const { return (train.size() + o.batch - 1) / o.batch; }
};

// The permutation of epoch e depends on (seed, e) only, so a resumed run sees the same order.
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  Rng rng(seed * 1000003 + static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(static_cast<uint64_t>(i + 1))]);
  return p;
}

nlohmann::json run_state(const Run& r) {
  return {{"elapsed_seconds", r.clock.elapsed()}, {"rng", {{"seed", r.rng.seed}, {"counter", r.rng.counter}}},
          {"epoch", r.epoch}, {"batch_in_epoch", r.batch_in_epoch},
          {"best_loss", std::isfinite(r.best_loss) ? r.best_loss : -1.0}, {"best_accuracy", r.best_accuracy},
          {"best_step", r.best_step}};
}

void restore_state(Run& r, const nlohmann::json& s, const std::string& path) {
  try {
    r.clock.step = s.at("step").get<int64_t>();
    r.clock.elapsed_before = s.at("elapsed_seconds").get<double>();
    r.rng = Rng(s.at("rng").at("seed").get<uint64_t>(), s.at("rng").at("counter").get<uint64_t>());
    r.epoch = s.at("epoch").get<int64_t>();
    r.batch_in_epoch = s.at("batch_in_epoch").get<int64_t>();
    double best = s.at("best_loss").get<double>();
    r.best_loss = best < 0 ? INFINITY : best;
    r.best_accuracy = s.at("best_accuracy").get<double>();
    r.best_step = s.at("best_step").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    fail(path, "/state.json: ", e.what());
  }
}

// Vocabulary, labels, encoded sets, model (new, or the checkpoint's with resume).
void setup(Run& r) {
  const ClassificationTrainOptions& o = r.o;
  std::vector<data::LabelledText> rows = data::read_labelled(o.train);
  const bool resuming = o.resume && !list_checkpoints(o.model_dir).empty();
  check(!(o.comm.distributed() && o.vocab.level == "spm" && !resuming), "train: vocab.level spm under mpirun: ",
        "train the first checkpoint in one process (its spm.model), then --resume under mpirun");
  if (o.resume && !resuming && o.comm.leader())
    std::fprintf(stderr, "--resume: nothing to resume in %s (no checkpoint): starting a new run\n", o.model_dir.c_str());
  ClassifierConfig c = o.model;
  if (resuming) {
    ClassifierModel saved = load_classifier(o.model_dir);
    r.cm.vocab = saved.vocab;
    r.cm.labels = saved.labels;
    c.vocab = saved.model.config.vocab;  // these two come from the data
    c.classes = saved.model.config.classes;
    check_same_model(classifier_config_to_json(saved.model.config), classifier_config_to_json(c),
                     o.model_dir + "/config.json", "model.");
    c = saved.model.config;
  } else {
    std::vector<std::string> texts;
    for (const auto& row : rows) texts.push_back(row.text);
    std::shared_ptr<const data::Tokenizer> spm;
    if (o.vocab.level == "spm") spm = data::train_piece_model(texts, o.model_dir + "/spm", o.vocab.spm_vocab);
    r.cm.vocab = data::build_vocab(texts, o.vocab, spm);
    r.cm.labels = data::label_set(rows);
    c.vocab = r.cm.vocab.size();
    c.classes = static_cast<int64_t>(r.cm.labels.size());
  }
  r.cm.model = make_classifier(c, o.seed);
  prepare(r.cm.model, o.precision, Use::training);
  if (!o.embeddings.empty() && !resuming)
    r.cm.model.embed.value().copy_from(data::load_embeddings(o.embeddings, r.cm.vocab, r.cm.model.embed.value()));
  bool cls = c.pooling == Pooling::cls;
  r.train = data::encode_set(rows, r.cm.labels, r.cm.vocab, c.pad_size, cls, o.train);
  if (!o.dev.empty()) r.dev = data::encode_set(data::read_labelled(o.dev), r.cm.labels, r.cm.vocab, c.pad_size, cls, o.dev);
  r.adam = std::make_unique<Adam>(r.cm.model.parameters(), o.adam);
  r.reducer = std::make_unique<GradientReducer>(o.comm, r.adam->params, o.allreduce);
  r.rng = Rng(o.seed * 7919 + 17);
  if (o.ema_decay > 0) r.ema = make_ema(r.cm.model.parameters(), o.ema_decay);
  const std::string checkpoint = resuming ? restore_newest_valid(o.model_dir, [&r](const std::string& path) {
    restore_state(r, load_checkpoint(path, *r.adam), path);
    restore_checkpoint_ema(r.ema, r.adam->params, path);
  }) : "";
  r.order = epoch_order(r.train.size(), o.seed, r.epoch);
  if (!o.comm.leader()) return;
  if (!checkpoint.empty()) {
    std::fprintf(stderr, "resumed from %s (step %lld)\n", checkpoint.c_str(), static_cast<long long>(r.clock.step));
  } else {
    save_classifier(r.cm, o.model_dir);
  }
  int64_t weights = 0;
  for (const auto& [k, v] : r.cm.model.parameters()) weights += v.value().numel();
  std::fprintf(stderr, "classifier: %lld training texts, %lld dev, %lld classes, vocab %lld (%s), %lld weights\n",
               static_cast<long long>(r.train.size()), static_cast<long long>(r.dev.size()),
               static_cast<long long>(c.classes), static_cast<long long>(c.vocab), r.cm.vocab.level.c_str(),
               static_cast<long long>(weights));
}

// The next batch's place: the epoch's next batch, or a new epoch in a new order.
void advance_batch(Run& r) {
  r.batch_in_epoch += 1;
  if (r.batch_in_epoch == r.batches_per_epoch()) {
    r.epoch += 1;
    r.batch_in_epoch = 0;
    r.order = epoch_order(r.train.size(), r.o.seed, r.epoch);
  }
}

// The gradient of the batch's mean loss from this rank's share of its rows: rank k of n takes rows
// [begin + k len/n, begin + (k+1) len/n) and weighs its mean loss by its share of the rows, so
// that the ranks' gradients sum to the whole batch's. Returns the batch's statistics (all ranks').
CrossEntropyStats rank_share_gradient(Run& r, int64_t begin, int64_t end) {
  const Communicator& comm = r.o.comm;
  const int64_t len = end - begin;
  const int64_t from = begin + len * comm.rank / comm.size, to = begin + len * (comm.rank + 1) / comm.size;
  CrossEntropyStats stats;
  if (to > from) {
    Tensor ids, labels;
    data::gather_batch(r.train, r.order, from, to, &ids, &labels);
    Context ctx{true, r.cm.model.config.dropout, &r.rng};
    Tape tape;
    TapeScope scope(tape);
    r.reducer->watch(tape);
    Var loss = cross_entropy(classifier_logits(r.cm.model, ids, ctx), labels, r.o.label_smoothing, -100, &stats);
    if (comm.distributed())
      tape.backward(loss, Tensor::full({}, static_cast<float>(to - from) / static_cast<float>(len)));
    else
      tape.backward(loss);
  }
  if (!comm.distributed()) return stats;
  const auto t0 = Clock::now();
  r.reducer->finish();
  double sums[3] = {stats.nll_sum, static_cast<double>(stats.count), static_cast<double>(stats.correct)};
  comm.allreduce_sum(sums, 3);
  stats.nll_sum = sums[0];
  stats.count = static_cast<int64_t>(sums[1]);
  stats.correct = static_cast<int64_t>(sums[2]);
  r.comm_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return stats;
}

// One optimizer step on the next batch; returns the batch's loss (mean) and fills its size.
// A batch whose loss or gradient is not finite is consumed without an update (*skipped).
double train_step(Run& r, int64_t* samples, int64_t* correct, bool* skipped) {
  const ClassificationTrainOptions& o = r.o;
  const int64_t begin = r.batch_in_epoch * o.batch, end = std::min(r.train.size(), begin + o.batch);
  CrossEntropyStats stats = rank_share_gradient(r, begin, end);
  {
    zero_pad_gradient(r.cm.model);
    const double norm = o.clip_norm > 0 ? clip_grad_norm(r.adam->params, o.clip_norm) : grad_norm(r.adam->params);
    *samples = end - begin;
    *correct = stats.correct;
    advance_batch(r);
    if (!std::isfinite(stats.nll_sum) || !std::isfinite(norm)) {  // skipped: no update, the step not counted
      r.adam->zero_grad();
      *skipped = true;
      return 0.0;
    }
    r.clock.step += 1;
    r.adam->update(static_cast<float>(learning_rate(o.schedule, r.clock.step)));
    r.adam->zero_grad();
    if (r.ema.decay > 0) ema_update(r.ema, r.adam->params, r.clock.step);
    return stats.nll_sum / std::max<int64_t>(stats.count, 1);
  }
}

// The weights validation measures and the model directory holds: their moving average when
// train.ema_decay is set, else the trained weights (shared) themselves.
Classifier model_weights(const Run& r) {
  if (r.ema.decay == 0) return r.cm.model;
  return classifier_from_tensors(r.cm.model.config, ema_tensors(r.ema), "the weights' moving average");
}

// Writes the model into model_dir (and, with a moving average, the raw weights into model_dir/raw/).
void save_model(const Run& r, nlohmann::json training) {
  if (r.ema.decay > 0) {
    save_classifier(r.cm, r.o.model_dir + "/raw", {{"training", training}});
    training["ema_decay"] = r.ema.decay;
  }
  save_classifier(ClassifierModel{model_weights(r), r.cm.vocab, r.cm.labels}, r.o.model_dir, {{"training", training}});
}

// Dev loss and accuracy; saves the model when the loss is the best so far.
void validate(Run& r, ProgressLog& log) {
  NoGrad no_grad;
  Classifier fp32 = model_weights(r);  // the f32 master weights, whatever precision trains them
  prepare(fp32, Precision::fp32, Use::training);
  const int64_t B = 512;
  std::vector<int64_t> all(static_cast<size_t>(r.dev.size()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  double nll = 0;
  int64_t correct = 0;
  for (int64_t b = 0; b < r.dev.size(); b += B) {
    Tensor ids, labels;
    data::gather_batch(r.dev, all, b, std::min(r.dev.size(), b + B), &ids, &labels);
    CrossEntropyStats s;
    cross_entropy(classifier_logits(fp32, ids, Context{}), labels, 0.0f, -100, &s);
    nll += s.nll_sum;
    correct += s.correct;
  }
  double loss = nll / r.dev.size(), acc = static_cast<double>(correct) / r.dev.size();
  bool better = loss < r.best_loss;
  if (better) {
    r.best_loss = loss;
    r.best_accuracy = acc;
    r.best_step = r.clock.step;
    save_model(r, {{"step", r.clock.step}, {"epoch", r.epoch}, {"dev_loss", loss}, {"dev_accuracy", acc}});
  }
  char line[200];
  std::snprintf(line, sizeof line, "valid step %lld  epoch %.2f  dev loss %.4f  dev acc %.2f%%%s",
                static_cast<long long>(r.clock.step), r.epoch + static_cast<double>(r.batch_in_epoch) / r.batches_per_epoch(),
                loss, acc * 100, better ? "  new best, saved" : "");
  log.write({{"event", "valid"}, {"step", r.clock.step}, {"epoch", r.epoch}, {"elapsed", r.clock.elapsed()}, {"dev_loss", loss},
             {"dev_accuracy", acc}, {"best", better}},
            line);
}

// The loop's cadence: validation and a checkpoint at every epoch's end, and by steps when asked.
LoopOptions loop_options(const Run& r) {
  const ClassificationTrainOptions& o = r.o;
  LoopOptions lo = common_loop_options(o);
  lo.validate_each_epoch = true;
  lo.checkpoint_each_epoch = true;
  lo.batches_per_epoch = r.batches_per_epoch();
  return lo;
}

}  // namespace

ClassificationTrainResult train_classifier(const ClassificationTrainOptions& o) {
  check(!o.model_dir.empty() && !o.train.empty(), "train: model_dir and data.train are needed");
  check(o.max_epochs > 0 || o.max_steps > 0 || o.max_minutes > 0,
        "train: set a budget: train.max_epochs, train.max_steps or train.max_minutes");
  check(o.batch >= 1, "train: batch must be >= 1, got ", o.batch);
  if (!o.resume && fs::exists(o.model_dir + "/checkpoints") && !list_checkpoints(o.model_dir).empty())
    fail(o.model_dir, " already holds checkpoints: pass --resume to continue, or choose another model_dir");
  fs::create_directories(o.model_dir);
  Run r{o, {}, {}, {}, {}};
  setup(r);
  int64_t total_samples = 0;
  double train_seconds = 0;
  TrainingTask task;
  task.step = [&] {
    StepSums s;
    s.loss_weight = 1;
    const auto t0 = Clock::now();
    s.loss_sum = train_step(r, &s.items, &s.correct, &s.skipped);
    s.comm_seconds = r.comm_seconds;
    train_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    total_samples += s.items;
    return s;
  };
  task.epoch = [&r] { return r.epoch; };
  if (r.dev.size() > 0)
    task.validate = [&r](ProgressLog& log) {
      validate(r, log);
      // early stopping: `patience` batches without a better dev loss
      const bool stop = r.o.patience > 0 && r.clock.step - r.best_step >= r.o.patience;
      if (stop)
        std::fprintf(stderr, "early stop: no better dev loss for %lld batches\n", static_cast<long long>(r.o.patience));
      return stop;
    };
  task.state = [&r] { return run_state(r); };
  if (r.ema.decay > 0) task.ema = [&r] { return ema_tensors(r.ema); };
  task.progress = [](const StepSums& w, double seconds) {
    const double loss = w.loss_sum / std::max<int64_t>(w.loss_weight, 1), sps = w.items / seconds;
    char words[128];
    std::snprintf(words, sizeof words, "loss %.4f  train acc %.2f%%  %5.0f samples/s", loss,
                  100.0 * w.correct / std::max<int64_t>(w.items, 1), sps);
    return std::make_pair(nlohmann::json{{"loss", loss}, {"samples_per_s", sps}}, std::string(words));
  };
  const LoopEnd end = run_training_loop(loop_options(r), r.clock, *r.adam, task);
  if (!o.comm.leader()) return {};
  if (r.dev.size() == 0 && end == LoopEnd::finished) save_model(r, {{"step", r.clock.step}});
  ClassificationTrainResult res{r.clock.step, r.epoch, r.best_loss, r.best_accuracy, r.clock.elapsed(),
                                total_samples / std::max(train_seconds, 1e-9)};
  std::fprintf(stderr, "done: %lld steps in %s (%.0f training samples/s); best dev loss %.4f, accuracy %.2f%% at step %lld; model in %s\n",
               static_cast<long long>(r.clock.step), format_duration(res.seconds).c_str(), res.samples_per_second,
               r.best_loss, r.best_accuracy * 100, static_cast<long long>(r.best_step), o.model_dir.c_str());
  return res;
}

}  // namespace attn
