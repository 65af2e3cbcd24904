#include "attn/train/translation_trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include "attn/data/batcher.h"
#include "attn/data/parallel_corpus.h"
#include "attn/data/tokenizer.h"
#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/ops/loss.h"
#include "attn/train/adam.h"
#include "attn/train/checkpoint.h"
#include "attn/train/ema.h"
#include "attn/train/loop.h"
#include "attn/train/model_size.h"
#include "attn/train/progress.h"
#include "attn/train/translation_validation.h"

namespace attn {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Everything the training loop carries from step to step.
struct Run {
  TranslationTrainOptions o;  // a copy: model.size auto writes the size it picks into o.model
  data::Tokenizer tokenizer;
  Seq2Seq model;  // either family (config model: transformer or rnn)
  std::unique_ptr<Adam> adam;
  std::unique_ptr<GradientReducer> reducer;  // sums the gradients over the ranks
  Ema ema;  // decay 0: none
  std::unique_ptr<data::Batcher> batcher;
  std::unique_ptr<DevSet> dev;
  Rng rng;
  LoopClock clock{0, 0.0, Stopwatch(o.clock)};  // train.clock: wall or this process's CPU time
  double best_bleu = -1, best_nll = INFINITY;
  int bad_validations = 0;
  int64_t tokens_seen = 0;
  double last_lr = 0;  // of the latest optimizer step
};

data::Tokenizer leader_tokenizer(const TranslationTrainOptions& o, const std::string& target);

// The run's tokenizer: the resumed run's, a given one, or one trained on the training text.
data::Tokenizer prepare_tokenizer(const TranslationTrainOptions& o) {
  std::string target = o.model_dir + "/spm.model";
  if (o.resume && fs::exists(target)) return data::Tokenizer::load(target);
  if (!o.comm.leader()) {  // rank 0 writes model_dir/spm.model; the others read it
    o.comm.barrier();
    return data::Tokenizer::load(target);
  }
  data::Tokenizer t = leader_tokenizer(o, target);
  o.comm.barrier();
  return t;
}

data::Tokenizer leader_tokenizer(const TranslationTrainOptions& o, const std::string& target) {
  if (!o.tokenizer.empty()) {
    data::Tokenizer t = data::Tokenizer::load(o.tokenizer);
    io::write_file_atomic(target, t.serialized());
    return t;
  }
  std::fprintf(stderr, "training a %d-piece %s SentencePiece model on %s and %s\n", o.vocab_size,
               o.tokenizer_type.c_str(), o.train_src.c_str(), o.train_tgt.c_str());
  data::TokenizerTrainOptions t;
  t.inputs = {o.train_src, o.train_tgt};
  t.model_prefix = o.model_dir + "/spm";
  t.vocab_size = o.vocab_size;
  t.model_type = o.tokenizer_type;
  t.input_sentence_size = o.tokenizer_sentences;
  t.seed = o.seed;
  data::Tokenizer::train(t);
  fs::remove(o.model_dir + "/spm.vocab");
  return data::Tokenizer::load(target);
}

nlohmann::json run_state(const Run& r) {
  data::BatcherState b = r.batcher->state();
  return {{"elapsed_seconds", r.clock.elapsed()},
          {"rng", {{"seed", r.rng.seed}, {"counter", r.rng.counter}}},
          {"batcher", {{"epoch", b.epoch}, {"batch_in_epoch", b.batch_in_epoch}, {"fingerprint", b.fingerprint}}},
          {"best_bleu", r.best_bleu},
          {"best_nll", std::isfinite(r.best_nll) ? r.best_nll : -1.0},
          {"bad_validations", r.bad_validations},
          {"tokens_seen", r.tokens_seen}};
}

void restore_state(Run& r, const nlohmann::json& s, const std::string& path) {
  try {
    r.clock.step = s.at("step").get<int64_t>();
    r.clock.elapsed_before = s.at("elapsed_seconds").get<double>();
    r.rng = Rng(s.at("rng").at("seed").get<uint64_t>(), s.at("rng").at("counter").get<uint64_t>());
    const auto& b = s.at("batcher");
    r.batcher->restore({b.at("epoch").get<int64_t>(), b.at("batch_in_epoch").get<int64_t>(),
                        b.at("fingerprint").get<uint64_t>()});
    r.best_bleu = s.at("best_bleu").get<double>();
    double nll = s.at("best_nll").get<double>();
    r.best_nll = nll < 0 ? INFINITY : nll;
    r.bad_validations = s.at("bad_validations").get<int>();
    r.tokens_seen = s.at("tokens_seen").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    fail(path, "/state.json: ", e.what());
  }
}

// The model of the run being resumed (model_dir/config.json), which must be the one asked for.
Seq2SeqConfig resumed_config(const std::string& model_dir, const Seq2SeqConfig& requested) {
  const std::string path = model_dir + "/config.json";
  const Seq2SeqConfig saved = seq2seq_config_from_json(read_json_file(path), path);
  auto settings = [](const Seq2SeqConfig& x) {  // config.json's "model" is the family, the setting model.type
    nlohmann::json j = seq2seq_config_to_json(x);
    j["type"] = j["model"];
    j.erase("model");
    return j;
  };
  check_same_model(settings(saved), settings(requested), path, "model.");
  return saved;
}

// The run's model configuration with the tokenizer's vocabulary and special ids.
Seq2SeqConfig with_vocabulary(Seq2SeqConfig c, const data::Tokenizer& tokenizer) {
  std::visit(
      [&](auto& m) {
        m.src_vocab = m.tgt_vocab = tokenizer.vocab_size();
        m.pad_id = data::kPadId;
        m.bos_id = data::kBosId;
        m.eos_id = data::kEosId;
      },
      c);
  return c;
}

// A new model of configuration c (seeded by train.seed), its optimizer, gradient reducer and
// moving average; the random stream of dropout from its start.
void start_model(Run& r, const Seq2SeqConfig& c) {
  const TranslationTrainOptions& o = r.o;
  r.model = make_seq2seq(c, o.seed);
  prepare(r.model, o.precision, Use::training);
  r.adam = std::make_unique<Adam>(r.model.parameters());
  r.reducer = std::make_unique<GradientReducer>(o.comm, r.adam->params, o.allreduce);
  r.ema = o.ema_decay > 0 ? make_ema(r.model.parameters(), o.ema_decay) : Ema{};
  r.rng = Rng(o.seed * 7919 + 17);
}

// The most tokens a side of a pair can have: a Transformer's positions hold the source with its eos
// and the target with its bos; an RNN has no positions to run out of (0: no limit).
int64_t tokens_that_fit(const Seq2SeqConfig& c) {
  const auto* t = std::get_if<TransformerConfig>(&c);
  return t ? t->max_len - 1 : 0;
}

// Builds (or, with resume, restores) the model, optimizer, data order and random stream.
void setup(Run& r) {
  TranslationTrainOptions& o = r.o;
  Seq2SeqConfig c = with_vocabulary(o.model, r.tokenizer);
  const bool resuming = o.resume && !list_checkpoints(o.model_dir).empty();
  if (o.resume && !resuming && o.comm.leader())
    std::fprintf(stderr, "--resume: nothing to resume in %s (no checkpoint): starting a new run\n", o.model_dir.c_str());
  if (resuming && o.auto_size) {  // the size model.size auto picked when the run started
    const Seq2SeqConfig saved = seq2seq_config_from_json(read_json_file(o.model_dir + "/config.json"),
                                                         o.model_dir + "/config.json");
    if (const auto* t = std::get_if<TransformerConfig>(&saved)) {
      TransformerConfig& asked = std::get<TransformerConfig>(c);
      for (const SizeDimension& d : size_dimensions()) asked.*d.field = t->*d.field;
      o.model = c;
      o.schedule.d_model = t->d_model;
    }
    o.auto_size = false;
  }
  if (resuming) c = resumed_config(o.model_dir, c);
  start_model(r, c);
  const int64_t fit = tokens_that_fit(r.model.config());
  const int64_t max_len = fit > 0 ? std::min(o.max_len, fit) : o.max_len;
  if (max_len < o.max_len && o.comm.leader())
    std::fprintf(stderr, "data.max_len %lld is more than model.max_len %lld positions hold with eos or bos: "
                 "training pairs longer than %lld tokens are skipped\n", static_cast<long long>(o.max_len),
                 static_cast<long long>(fit + 1), static_cast<long long>(max_len));
  auto corpus = data::read_parallel_corpus(o.train_src, o.train_tgt, r.tokenizer,
                                           data::CorpusOptions::training(max_len));
  if (o.comm.leader()) std::fprintf(stderr, "training data: %s\n", data::describe(corpus.stats, max_len).c_str());
  data::BatchOptions bo;
  bo.max_tokens = o.max_tokens;
  bo.seed = o.seed;
  r.batcher = std::make_unique<data::Batcher>(std::move(corpus.examples), bo);
  if (!o.valid_src.empty()) {
    r.dev = std::make_unique<DevSet>(load_dev_set(o.valid_src, o.valid_tgt, r.tokenizer, o.valid_sentences, fit));
    if (o.comm.leader()) std::fprintf(stderr, "%s\n", describe(*r.dev).c_str());
  }
  const std::string checkpoint = resuming ? restore_newest_valid(o.model_dir, [&r](const std::string& path) {
    restore_state(r, load_checkpoint(path, *r.adam), path);
    restore_checkpoint_ema(r.ema, r.adam->params, path);
  }) : "";
  if (!o.comm.leader()) return;
  if (!checkpoint.empty()) {
    std::fprintf(stderr, "resumed from %s (step %lld, %s of training so far)\n", checkpoint.c_str(),
                 static_cast<long long>(r.clock.step), format_duration(r.clock.elapsed_before).c_str());
  } else {
    save_seq2seq(r.model, o.model_dir, {{"tokenizer", "spm.model"}});
  }
}

// The "model:" line on stderr: family, weights and shape.
void print_model(const Run& r) {
  if (!r.o.comm.leader()) return;
  const Seq2SeqConfig c = r.model.config();
  int64_t weights = 0;
  for (const auto& [k, v] : r.model.parameters()) weights += v.value().numel();
  std::string shape = std::visit(
      [](const auto& m) {
        return "d_model " + std::to_string(m.d_model) + ", " + std::to_string(m.encoder_layers) + "+" +
               std::to_string(m.decoder_layers) + " layers";
      },
      c);
  if (const auto* t = std::get_if<TransformerConfig>(&c))
    shape += ", " + std::to_string(t->heads) + " heads, d_ff " + std::to_string(t->d_ff);
  std::fprintf(stderr, "model: %s, %zu parameter tensors, %lld weights; %s\n", name(kind_of(c)),
               r.model.parameters().size(), static_cast<long long>(weights), shape.c_str());
}

struct StepResult {
  double loss_sum = 0;  // label-smoothed loss times target tokens, summed over the batches
  int64_t tgt_tokens = 0, src_tokens = 0;
  double grad_norm = 0;
  double comm_seconds = 0;  // waiting for the gradients' sums
  bool skipped = false;  // the loss or gradient was not finite
};

// The fraction of the training budget used (the largest of steps, time and epochs), for decay.
double budget_used(const Run& r) {
  double p = 0.0;
  if (r.o.max_steps > 0) p = static_cast<double>(r.clock.step) / static_cast<double>(r.o.max_steps);
  if (r.o.max_minutes > 0) p = std::max(p, r.clock.elapsed() / (r.o.max_minutes * 60.0));
  if (r.o.max_epochs > 0) {
    const data::BatcherState b = r.batcher->state();
    const double epochs = static_cast<double>(b.epoch) + static_cast<double>(b.batch_in_epoch) /
                                                             static_cast<double>(std::max<int64_t>(1, r.batcher->batches_in_epoch()));
    p = std::max(p, epochs / static_cast<double>(r.o.max_epochs));
  }
  return std::min(p, 1.0);
}

// The step's sums of all ranks: the gradients (their buckets started during the last backward),
// the loss and the token counts.
void sum_over_ranks(const Communicator& comm, StepResult& s, GradientReducer& reducer) {
  if (!comm.distributed()) return;
  const auto t0 = Clock::now();
  reducer.finish();
  double sums[3] = {s.loss_sum, static_cast<double>(s.tgt_tokens), static_cast<double>(s.src_tokens)};
  comm.allreduce_sum(sums, 3);
  s.loss_sum = sums[0];
  s.tgt_tokens = static_cast<int64_t>(sums[1]);
  s.src_tokens = static_cast<int64_t>(sums[2]);
  s.comm_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

// One optimizer step over `accumulate` batches (all ranks together).
StepResult train_step(Run& r) {
  StepResult s;
  const TranslationTrainOptions& o = r.o;
  Context ctx{true, r.model.common().dropout, &r.rng};
  // Teacher forcing, free-running or scheduled sampling (models/scheduled_sampling.h).
  DecoderFeeding feeding{static_cast<float>(teacher_forcing_at(o.teacher_forcing, r.clock.step)), &r.rng};
  for (int a = 0; a < o.accumulate; ++a) {
    // Rank r computes the step's batches r, r + size, ...: every rank draws the whole global batch
    // (the same data position on every rank), so the split does not change what is trained on.
    data::Batch b = r.batcher->next();
    if (a % o.comm.size != o.comm.rank) continue;
    Tape tape;
    TapeScope scope(tape);
    if (a + o.comm.size >= o.accumulate) r.reducer->watch(tape);  // this rank's last batch of the step
    Var logits = seq2seq_logits(r.model, b.src, b.tgt_in, ctx, feeding);
    Var loss = cross_entropy(logits, b.tgt_out, o.label_smoothing, r.model.common().pad_id);
    // The gradient of the mean of the accumulated batches' losses.
    tape.backward(loss, Tensor::full({}, 1.0f / static_cast<float>(o.accumulate)));
    s.loss_sum += loss.value().data<float>()[0] * static_cast<double>(b.tgt_tokens);
    s.tgt_tokens += b.tgt_tokens;
    s.src_tokens += b.src_tokens;
  }
  sum_over_ranks(o.comm, s, *r.reducer);
  s.grad_norm = o.clip_norm > 0 ? clip_grad_norm(r.adam->params, o.clip_norm) : grad_norm(r.adam->params);
  if (!std::isfinite(s.loss_sum) || !std::isfinite(s.grad_norm)) {  // skipped: no update, the step not counted
    r.adam->zero_grad();
    s.skipped = true;
    return s;
  }
  r.clock.step += 1;
  r.last_lr = learning_rate(o.schedule, r.clock.step, budget_used(r));
  r.adam->update(static_cast<float>(r.last_lr));
  r.adam->zero_grad();
  if (r.ema.decay > 0) ema_update(r.ema, r.adam->params, r.clock.step);
  r.tokens_seen += s.tgt_tokens;
  return s;
}

// model.size auto: the run's first steps, on the reference size, measure how many reference steps
// the machine makes per second of train.clock (3 steps to warm up, then up to 20, fewer when they
// pass 3% of the budget); the rule (train/model_size.h) picks the size for the budget left. The
// reference size goes on from where it is; another size starts afresh, as a run given that size
// would (weights, optimizer, data order, random stream), with the probe's time spent from its budget.
void choose_size(Run& r) {
  constexpr int64_t kWarmSteps = 3, kTimedSteps = 20, kFewestTimed = 5;
  constexpr double kMostOfBudget = 0.03;
  TranslationTrainOptions& o = r.o;
  const double budget = o.max_minutes * 60.0;
  double start = 0;
  int64_t steps = 0;
  for (;;) {  // rank 0 decides when to stop: every rank takes the same steps
    const double now = r.clock.elapsed();
    if (steps == kWarmSteps) start = now;
    const bool within = now < budget && (o.max_steps == 0 || r.clock.step < o.max_steps);
    bool more = within && (steps < kWarmSteps + kFewestTimed ||
                           (steps < kWarmSteps + kTimedSteps && now < kMostOfBudget * budget));
    o.comm.broadcast(&more, sizeof more);
    if (!more) break;
    train_step(r);
    ++steps;
  }
  const int64_t timed = std::max<int64_t>(0, steps - kWarmSteps);
  double rate = timed > 0 ? static_cast<double>(timed) / std::max(r.clock.elapsed() - start, 1e-9) : 0.0;
  o.comm.broadcast(&rate, sizeof rate);
  const double left = std::max(0.0, budget - r.clock.elapsed());
  // A budget spent before the measurement ended keeps the reference: there is nothing left to spend.
  const ModelSize& size = timed > 0 ? size_for_budget(rate * left) : reference_size();
  const bool same = &size == &reference_size();
  if (o.comm.leader()) {
    char line[512];
    if (timed == 0)
      std::snprintf(line, sizeof line, "model.size auto: the budget ended before the step rate was measured: %s goes on",
                    describe(size).c_str());
    else
      std::snprintf(line, sizeof line,
                    "model.size auto: %.2f reference steps/s of %s time over %lld steps, %.0f in the %s left: %s%s",
                    rate, o.clock == BudgetClock::cpu ? "CPU" : "wall", static_cast<long long>(timed), rate * left,
                    format_duration(left).c_str(), describe(size).c_str(),
                    same ? " (the reference: it goes on)" : " (a new start)");
    ProgressLog log(o.model_dir + "/train_log.jsonl");
    log.write({{"event", "size"}, {"step", r.clock.step}, {"elapsed", r.clock.elapsed()},
               {"reference_steps_per_s", rate}, {"reference_steps_left", rate * left}, {"size", size.name}},
              line);
  }
  o.auto_size = false;
  if (same) return;
  TransformerConfig& t = std::get<TransformerConfig>(o.model);
  apply_size(size, t);
  o.schedule.d_model = t.d_model;
  start_model(r, with_vocabulary(o.model, r.tokenizer));
  r.batcher->restore({0, 0, 0});
  r.clock = LoopClock{0, r.clock.elapsed(), Stopwatch(o.clock)};
  r.tokens_seen = 0;
  if (o.comm.leader()) save_seq2seq(r.model, o.model_dir, {{"tokenizer", "spm.model"}});
}

// The weights validation measures and the model directory holds: their moving average when
// train.ema_decay is set, else the trained weights themselves.
Seq2Seq model_weights(const Run& r) {
  if (r.ema.decay == 0) return r.model;
  return seq2seq_from_tensors(r.model.config(), ema_tensors(r.ema), "the weights' moving average");
}

// Writes the model into model_dir (and, with a moving average, the raw weights into model_dir/raw/,
// a model directory of its own with a copy of the tokenizer).
void save_model(const Run& r, nlohmann::json training) {
  const std::string& dir = r.o.model_dir;
  if (r.ema.decay > 0) {
    save_seq2seq(r.model, dir + "/raw", {{"tokenizer", "spm.model"}, {"training", training}});
    io::write_file_atomic(dir + "/raw/spm.model", r.tokenizer.serialized());
    training["ema_decay"] = r.ema.decay;
  }
  save_seq2seq(model_weights(r), dir, {{"tokenizer", "spm.model"}, {"training", training}});
}

// Returns true when early stopping says to stop.
// A validation that fails (whatever the dev set or the weights hold) is logged and the run goes
// on: the checkpoint written before it keeps every step, and the next validation tries again.
bool validate(Run& r, ProgressLog& log) {
  const TranslationTrainOptions& o = r.o;
  ValidationResult v;
  try {
    v = run_validation(model_weights(r), *r.dev, o.valid_beam);
  } catch (const std::exception& e) {
    log.write({{"event", "valid_failed"}, {"step", r.clock.step}, {"elapsed", r.clock.elapsed()}, {"error", e.what()}},
              "valid step " + std::to_string(r.clock.step) + " failed, training goes on: " + e.what());
    return false;
  }
  bool better = v.bleu > r.best_bleu || (v.bleu == r.best_bleu && v.nll < r.best_nll);
  if (better) {
    r.best_bleu = v.bleu;
    r.best_nll = v.nll;
    r.bad_validations = 0;
    save_model(r, {{"step", r.clock.step}, {"dev_bleu", v.bleu}, {"dev_chrf", v.chrf}});
  } else {
    r.bad_validations += 1;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "valid step %lld%s  dev loss %.4f  ppl %.2f  BLEU %.2f  chrF %.2f  (%.1fs)%s",
                static_cast<long long>(r.clock.step), r.ema.decay > 0 ? " (weights' average)" : "", v.nll, std::exp(v.nll), v.bleu, v.chrf, v.seconds,
                better ? "  new best, saved" : "");
  log.write({{"event", "valid"}, {"step", r.clock.step}, {"elapsed", r.clock.elapsed()}, {"dev_nll", v.nll},
             {"dev_ppl", std::exp(v.nll)}, {"dev_bleu", v.bleu}, {"dev_chrf", v.chrf}, {"best", better}},
            line);
  return o.patience > 0 && r.bad_validations >= o.patience;
}

// The loop's cadence: validation by steps, checkpoints by steps and by time.
LoopOptions loop_options(const Run& r) {
  const TranslationTrainOptions& o = r.o;
  LoopOptions lo = common_loop_options(o);
  lo.checkpoint_minutes = o.checkpoint_minutes;
  // The batches of an epoch are fixed, so an epoch budget is a step budget for the ETA.
  lo.batches_per_epoch = r.batcher->batches_in_epoch();
  lo.batches_per_step = o.accumulate;
  return lo;
}

}  // namespace

void train_translation(const TranslationTrainOptions& o) {
  check(!o.model_dir.empty(), "train: model_dir is not set");
  check(!o.train_src.empty() && !o.train_tgt.empty(), "train: data.train_src and data.train_tgt are needed");
  check(o.max_steps > 0 || o.max_minutes > 0 || o.max_epochs > 0,
        "train: set a budget: train.max_steps, train.max_minutes or train.max_epochs");
  check(!o.auto_size || (o.max_minutes > 0 && std::holds_alternative<TransformerConfig>(o.model)),
        "train: model.size auto chooses a Transformer's size for a time budget: set train.max_minutes, or a size");
  check(o.accumulate >= 1, "train: accumulate must be >= 1, got ", o.accumulate);
  check(o.accumulate % o.comm.size == 0, "train: train.accumulate (", o.accumulate, ", the batches of a step) must be a ",
        "multiple of the ", o.comm.size, " ranks: each rank computes accumulate/ranks of them");
  if (!o.resume && fs::exists(o.model_dir + "/checkpoints") && !list_checkpoints(o.model_dir).empty())
    fail(o.model_dir, " already holds checkpoints: pass --resume to continue, or choose another model_dir");
  fs::create_directories(o.model_dir);
  Run r{o, prepare_tokenizer(o), {}, {}, {}, {}, {}, {}, Rng(0)};
  setup(r);
  if (r.o.auto_size) choose_size(r);
  print_model(r);
  TrainingTask task;
  task.step = [&r] {
    const StepResult s = train_step(r);
    return StepSums{s.loss_sum, s.tgt_tokens, s.tgt_tokens, 0, s.skipped, s.comm_seconds};
  };
  task.epoch = [&r] { return r.batcher->state().epoch; };
  if (r.dev) task.validate = [&r](ProgressLog& log) { return validate(r, log); };
  task.state = [&r] { return run_state(r); };
  if (r.ema.decay > 0) task.ema = [&r] { return ema_tensors(r.ema); };
  task.progress = [&r](const StepSums& w, double seconds) {
    const double loss = w.loss_sum / std::max<int64_t>(w.loss_weight, 1), tps = w.items / seconds;
    char words[128];
    std::snprintf(words, sizeof words, "loss %.4f  lr %.3e  %6.0f tgt tok/s", loss, r.last_lr, tps);
    return std::make_pair(nlohmann::json{{"loss", loss}, {"lr", r.last_lr}, {"tgt_tokens_per_s", tps},
                                         {"tokens_seen", r.tokens_seen}},
                          std::string(words));
  };
  if (run_training_loop(loop_options(r), r.clock, *r.adam, task) == LoopEnd::interrupted || !o.comm.leader()) return;
  // No dev set, or no validation that succeeded: the model directory gets the last weights.
  if (!r.dev || r.best_bleu < 0) save_model(r, {{"step", r.clock.step}});
  std::fprintf(stderr, "done: %lld steps in %s; model in %s\n", static_cast<long long>(r.clock.step),
               format_duration(r.clock.elapsed()).c_str(), o.model_dir.c_str());
}

}  // namespace attn
