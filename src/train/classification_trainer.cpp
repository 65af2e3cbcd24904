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
  Rng rng{0};                 // dropout
  std::vector<int64_t> order;  // this epoch's permutation of the training rows
  int64_t step = 0, epoch = 0, batch_in_epoch = 0;
  double best_loss = INFINITY, best_accuracy = 0;
  int64_t best_step = 0;
  double elapsed_before = 0;
  Stopwatch watch{o.clock};  // train.clock: wall or this process's CPU time

  double elapsed() const { return elapsed_before + watch.seconds(); }
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
  return {{"elapsed_seconds", r.elapsed()}, {"rng", {{"seed", r.rng.seed}, {"counter", r.rng.counter}}},
          {"epoch", r.epoch}, {"batch_in_epoch", r.batch_in_epoch},
          {"best_loss", std::isfinite(r.best_loss) ? r.best_loss : -1.0}, {"best_accuracy", r.best_accuracy},
          {"best_step", r.best_step}};
}

void restore_state(Run& r, const nlohmann::json& s, const std::string& path) {
  try {
    r.step = s.at("step").get<int64_t>();
    r.elapsed_before = s.at("elapsed_seconds").get<double>();
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
  std::string checkpoint = o.resume ? latest_checkpoint(o.model_dir) : "";
  ClassifierConfig c = o.model;
  if (!checkpoint.empty()) {
    ClassifierModel saved = load_classifier(o.model_dir);
    r.cm.vocab = saved.vocab;
    r.cm.labels = saved.labels;
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
  if (!o.embeddings.empty() && checkpoint.empty())
    r.cm.model.embed.value().copy_from(data::load_embeddings(o.embeddings, r.cm.vocab, r.cm.model.embed.value()));
  bool cls = c.pooling == "cls";
  r.train = data::encode_set(rows, r.cm.labels, r.cm.vocab, c.pad_size, cls, o.train);
  if (!o.dev.empty()) r.dev = data::encode_set(data::read_labelled(o.dev), r.cm.labels, r.cm.vocab, c.pad_size, cls, o.dev);
  r.adam = std::make_unique<Adam>(r.cm.model.parameters(), o.adam);
  r.rng = Rng(o.seed * 7919 + 17);
  if (!checkpoint.empty()) {
    restore_state(r, load_checkpoint(checkpoint, *r.adam), checkpoint);
    std::fprintf(stderr, "resumed from %s (step %lld)\n", checkpoint.c_str(), static_cast<long long>(r.step));
  } else {
    save_classifier(r.cm, o.model_dir);
  }
  r.order = epoch_order(r.train.size(), o.seed, r.epoch);
  int64_t weights = 0;
  for (const auto& [k, v] : r.cm.model.parameters()) weights += v.value().numel();
  std::fprintf(stderr, "classifier: %lld training texts, %lld dev, %lld classes, vocab %lld (%s), %lld weights\n",
               static_cast<long long>(r.train.size()), static_cast<long long>(r.dev.size()),
               static_cast<long long>(c.classes), static_cast<long long>(c.vocab), r.cm.vocab.level.c_str(),
               static_cast<long long>(weights));
}

// One optimizer step on the next batch; returns the batch's loss (mean) and fills its size.
double train_step(Run& r, int64_t* samples, int64_t* correct) {
  const ClassificationTrainOptions& o = r.o;
  int64_t begin = r.batch_in_epoch * o.batch, end = std::min(r.train.size(), begin + o.batch);
  Tensor ids, labels;
  data::gather_batch(r.train, r.order, begin, end, &ids, &labels);
  Context ctx{true, r.cm.model.config.dropout, &r.rng};
  Tape tape;
  CrossEntropyStats stats;
  {
    TapeScope scope(tape);
    Var loss = cross_entropy(classifier_logits(r.cm.model, ids, ctx), labels, o.label_smoothing, -100, &stats);
    tape.backward(loss);
    zero_pad_gradient(r.cm.model);
    if (o.clip_norm > 0) clip_grad_norm(r.adam->params, o.clip_norm);
    r.step += 1;
    r.adam->update(static_cast<float>(learning_rate(o.schedule, r.step)));
    r.adam->zero_grad();
    *samples = end - begin;
    *correct = stats.correct;
    r.batch_in_epoch += 1;
    if (r.batch_in_epoch == r.batches_per_epoch()) {
      r.epoch += 1;
      r.batch_in_epoch = 0;
      r.order = epoch_order(r.train.size(), o.seed, r.epoch);
    }
    return stats.nll_sum / std::max<int64_t>(stats.count, 1);
  }
}

// Dev loss and accuracy; saves the model when the loss is the best so far.
void validate(Run& r, ProgressLog& log) {
  NoGrad no_grad;
  Classifier fp32 = r.cm.model;  // the f32 master weights (shared), whatever precision trains them
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
    r.best_step = r.step;
    save_classifier(r.cm, r.o.model_dir,
                    {{"training", {{"step", r.step}, {"epoch", r.epoch}, {"dev_loss", loss}, {"dev_accuracy", acc}}}});
  }
  char line[200];
  std::snprintf(line, sizeof line, "valid step %lld  epoch %.2f  dev loss %.4f  dev acc %.2f%%%s",
                static_cast<long long>(r.step), r.epoch + static_cast<double>(r.batch_in_epoch) / r.batches_per_epoch(),
                loss, acc * 100, better ? "  new best, saved" : "");
  log.write({{"event", "valid"}, {"step", r.step}, {"epoch", r.epoch}, {"elapsed", r.elapsed()}, {"dev_loss", loss},
             {"dev_accuracy", acc}, {"best", better}},
            line);
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
  ProgressLog log(o.model_dir + "/train_log.jsonl");
  const int64_t start_step = r.step;
  const double start_elapsed = r.elapsed_before, max_seconds = o.max_minutes * 60.0;
  double loss_sum = 0, window_start = r.elapsed();
  int64_t window_samples = 0, window_correct = 0, window_batches = 0, total_samples = 0;
  double train_seconds = 0;
  // A resumed run whose budget is already spent trains no further batch.
  bool stop = budget_spent(r.step, r.elapsed(), r.epoch, o.max_steps, max_seconds, o.max_epochs);
  if (stop) std::fprintf(stderr, "the budget is spent already (step %lld): nothing to train\n", static_cast<long long>(r.step));
  while (!stop) {
    int64_t epoch_before = r.epoch, samples = 0, correct = 0;
    auto t0 = Clock::now();
    loss_sum += train_step(r, &samples, &correct);
    train_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    window_samples += samples, window_correct += correct, window_batches += 1, total_samples += samples;
    double now = r.elapsed();
    bool epoch_done = r.epoch != epoch_before;
    bool budget = budget_spent(r.step, now, r.epoch, o.max_steps, max_seconds, o.max_epochs);
    if (r.step % o.log_every == 0 || budget) {
      double sps = window_samples / std::max(now - window_start, 1e-9);
      double eta = eta_seconds(now, r.step, start_step, start_elapsed,
                               eta_step_budget(o.max_steps, o.max_epochs, r.batches_per_epoch(), 1), max_seconds);
      char line[200];
      std::snprintf(line, sizeof line, "step %6lld  epoch %lld  loss %.4f  train acc %.2f%%  %5.0f samples/s  %s elapsed  ETA %s",
                    static_cast<long long>(r.step), static_cast<long long>(epoch_before + 1), loss_sum / window_batches,
                    100.0 * window_correct / std::max<int64_t>(window_samples, 1), sps, format_duration(now).c_str(),
                    format_duration(eta).c_str());
      log.write({{"event", "train"}, {"step", r.step}, {"epoch", epoch_before + 1}, {"loss", loss_sum / window_batches},
                 {"samples_per_s", sps}, {"elapsed", now}, {"eta", eta}},
                line);
      loss_sum = 0, window_samples = window_correct = window_batches = 0;
      window_start = r.elapsed();
    }
    if (r.dev.size() > 0 && (epoch_done || budget || (o.validate_every > 0 && r.step % o.validate_every == 0))) {
      validate(r, log);
      stop = o.patience > 0 && r.step - r.best_step >= o.patience;
      if (stop) std::fprintf(stderr, "early stop: no better dev loss for %lld batches\n", static_cast<long long>(o.patience));
    }
    if (epoch_done || budget || stop || (o.checkpoint_every > 0 && r.step % o.checkpoint_every == 0))
      save_checkpoint(o.model_dir, r.step, *r.adam, run_state(r), o.keep_checkpoints);
    stop = stop || budget;
  }
  if (r.dev.size() == 0) save_classifier(r.cm, o.model_dir, {{"training", {{"step", r.step}}}});
  ClassificationTrainResult res{r.step, r.epoch, r.best_loss, r.best_accuracy, r.elapsed(),
                                total_samples / std::max(train_seconds, 1e-9)};
  std::fprintf(stderr, "done: %lld steps in %s (%.0f training samples/s); best dev loss %.4f, accuracy %.2f%% at step %lld; model in %s\n",
               static_cast<long long>(r.step), format_duration(res.seconds).c_str(), res.samples_per_second,
               r.best_loss, r.best_accuracy * 100, static_cast<long long>(r.best_step), o.model_dir.c_str());
  return res;
}

}  // namespace attn
