#include "attn/train/run_config.h"

#include "attn/error.h"
#include "attn/models/limits.h"
#include "attn/runtime.h"
#include "attn/train/model_size.h"

namespace attn {
namespace {

// Sizes are bounded well above any model this CPU trains, low enough to catch a typo (the model.*
// keys by the model configs' own tables).
constexpr double kMaxVocab = kLimits.vocab, kMaxTokens = 1 << 24;
const std::vector<std::string> kSchedules = {"noam", "constant", "inverse_sqrt"};
const std::vector<std::string> kClocks = {"wall", "cpu"};
const std::string kPrecisionHelp =
    "fp32, bf16 (the products of linear layers and matmuls in bfloat16 with f32 accumulation; weights, gradients, "
    "Adam, norms and loss stay f32; validation runs in fp32), or auto: bf16 where the CPU multiplies bf16 natively "
    "(AVX512-BF16, AMX), else fp32";
// Data-parallel training under mpirun (docs/distributed.md); one process ignores them.
const std::string kBucketHelp =
    "mpirun: gradients summed per allreduce, in KiB of fp32 (smaller buckets start sooner during backward; "
    "each costs a network latency)";
const std::string kOverlapHelp =
    "mpirun: start each bucket's allreduce as soon as backward has finished its gradients (false: all after "
    "backward; the sums are the same)";

using T = TranslationRun;

// The data and model keys of task translation.
std::vector<ConfigKey<T>> translation_data_model_keys() {
  return {
      {{"model_dir", "output directory: model, tokenizer, checkpoints, train_log.jsonl"}, [](T& r) -> Field { return &r.o.model_dir; }},
      {{"data.train_src", "training source text, one sentence a line"}, [](T& r) -> Field { return &r.o.train_src; }},
      {{"data.train_tgt", "training target text, aligned with train_src"}, [](T& r) -> Field { return &r.o.train_tgt; }},
      {{"data.valid_src", "dev source text (empty: no validation)"}, [](T& r) -> Field { return &r.o.valid_src; }},
      {{"data.valid_tgt", "dev target text"}, [](T& r) -> Field { return &r.o.valid_tgt; }},
      {{"data.tokenizer", "an existing SentencePiece .model (unset: train one)"}, [](T& r) -> Field { return &r.o.tokenizer; }},
      {{"data.vocab_size", "pieces of the SentencePiece model trained when none is given", between(4, kMaxVocab)}, [](T& r) -> Field { return &r.o.vocab_size; }},
      {{"data.tokenizer_type", "SentencePiece model type", {}, {"unigram", "bpe"}}, [](T& r) -> Field { return &r.o.tokenizer_type; }},
      {{"data.tokenizer_sentences", "lines sampled (from both sides) to train the tokenizer (0: all)", at_least(0)}, [](T& r) -> Field { return &r.o.tokenizer_sentences; }},
      {{"data.max_len", "training pairs with more tokens than this on a side are skipped", between(1, kMaxTokens)}, [](T& r) -> Field { return &r.o.max_len; }},
      {{"model.type", "transformer, or rnn: seed 003's RNN encoder-decoder (shortcut --set model=rnn)", {}, {"transformer", "rnn"}}, [](T& r) -> Field { return &r.model.type; }},
      {{"model.size", "auto: the first steps measure this machine's speed, then the Transformer size the time budget "
                      "left affords is trained (docs/translation.md, \"Model size for the budget\"); or a size: tiny, "
                      "small, medium, base. model.d_model, heads, encoder_layers, decoder_layers and d_ff override a "
                      "size's; any of them given, or no train.max_minutes, means no auto (small, the defaults below)",
        {}, {"auto", "tiny", "small", "medium", "base"}}, [](T& r) -> Field { return &r.model.size; }},
  };
}

// The training keys of task translation (train.*).
std::vector<ConfigKey<T>> translation_train_keys() {
  return {
      {{"train.max_tokens", "tokens per batch and side (padded batch size * length)", between(1, kMaxTokens)}, [](T& r) -> Field { return &r.o.max_tokens; }},
      {{"train.accumulate", "batches per optimizer step (gradient accumulation)", between(1, 1 << 16)}, [](T& r) -> Field { return &r.o.accumulate; }},
      {{"train.schedule", "learning-rate schedule (noam: the paper's)", {}, kSchedules}, [](T& r) -> Field { return &r.o.schedule.kind; }},
      {{"train.decay", "the schedule times (1 - p) (linear) or (1 + cos(pi p)) / 2 (cosine), p the fraction of the budget used (the largest of steps, time and epochs)", {}, {"none", "linear", "cosine"}}, [](T& r) -> Field { return &r.o.schedule.decay; }},
      {{"train.lr_factor", "noam: lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)", above(0)}, [](T& r) -> Field { return &r.o.schedule.factor; }},
      {{"train.lr", "constant and inverse_sqrt: the peak learning rate", above(0)}, [](T& r) -> Field { return &r.o.schedule.lr; }},
      {{"train.warmup", "warm-up steps", at_least(0)}, [](T& r) -> Field { return &r.o.schedule.warmup; }},
      {{"train.label_smoothing", "epsilon_ls", fraction_below_one()}, [](T& r) -> Field { return &r.o.label_smoothing; }},
      {{"train.teacher_forcing", "probability of feeding the gold previous token (1: teacher forcing, 0: free-running)", between(0, 1)}, [](T& r) -> Field { return &r.o.teacher_forcing.start; }},
      {{"train.teacher_forcing_min", "where the teacher_forcing_schedule decays to", between(0, 1)}, [](T& r) -> Field { return &r.o.teacher_forcing.end; }},
      {{"train.teacher_forcing_schedule", "scheduled sampling", {}, {"constant", "linear", "inverse_sigmoid", "exponential"}}, [](T& r) -> Field { return &r.o.teacher_forcing.kind; }},
      {{"train.teacher_forcing_steps", "linear: steps to decay; inverse_sigmoid: k; exponential: time constant", above(0)}, [](T& r) -> Field { return &r.o.teacher_forcing.steps; }},
      {{"train.clip_norm", "clip the global gradient norm to this (0: no clipping)", at_least(0)}, [](T& r) -> Field { return &r.o.clip_norm; }},
      {{"train.ema_decay", "keep a moving average of the weights with this decay (e.g. 0.9999), validated and saved as the model; the raw weights go to model_dir/raw (0: none)", fraction_below_one()}, [](T& r) -> Field { return &r.o.ema_decay; }},
      {{"train.max_steps", "stop after this many optimizer steps (0: no limit)", at_least(0)}, [](T& r) -> Field { return &r.o.max_steps; }},
      {{"train.max_minutes", "stop after this much time on train.clock, validation included (0: no limit)", at_least(0)}, [](T& r) -> Field { return &r.o.max_minutes; }},
      {{"train.clock", "what train.max_minutes, checkpoint_minutes, decay and the logs' elapsed count: wall time, or cpu (this process's CPU time over all threads; a loaded or oversubscribed machine does not stretch it)", {}, kClocks}, [](T& r) -> Field { return &r.o.clock; }},
      {{"train.max_epochs", "stop after this many passes over the data (0: no limit)", at_least(0)}, [](T& r) -> Field { return &r.o.max_epochs; }},
      {{"train.seed", "seed of the initialisation, data order and dropout", at_least(0)}, [](T& r) -> Field { return &r.o.seed; }},
      {{"train.threads", "threads", between(1, kMaxThreads)}, [](T& r) -> Field { return &r.threads; }},
      {{"train.precision", kPrecisionHelp}, [](T& r) -> Field { return &r.precision; }},
      {{"train.log_every", "steps between progress lines", at_least(1)}, [](T& r) -> Field { return &r.o.log_every; }},
      {{"train.checkpoint_every", "steps between checkpoints (0: by time only)", at_least(0)}, [](T& r) -> Field { return &r.o.checkpoint_every; }},
      {{"train.checkpoint_minutes", "minutes between checkpoints (0: by steps only)", at_least(0)}, [](T& r) -> Field { return &r.o.checkpoint_minutes; }},
      {{"train.keep_checkpoints", "checkpoints kept (the newest; 0: all)", at_least(0)}, [](T& r) -> Field { return &r.o.keep_checkpoints; }},
      {{"train.max_bad_steps", "steps in a row whose loss or gradient is NaN or infinite (each skipped, no update) that end the run with an error", at_least(1)}, [](T& r) -> Field { return &r.o.max_bad_steps; }},
      {{"train.validate_every", "steps between validations (0: only at the end)", at_least(0)}, [](T& r) -> Field { return &r.o.validate_every; }},
      {{"train.patience", "early stopping after this many validations without a better dev BLEU (0: never)", at_least(0)}, [](T& r) -> Field { return &r.o.patience; }},
      {{"train.valid_beam", "beam used to translate the dev set for BLEU (1: greedy)", between(1, 1024)}, [](T& r) -> Field { return &r.o.valid_beam; }},
      {{"train.valid_sentences", "dev sentences translated for BLEU (0: all)", at_least(0)}, [](T& r) -> Field { return &r.o.valid_sentences; }},
      {{"train.allreduce_bucket_kb", kBucketHelp, between(1, 1 << 21)}, [](T& r) -> Field { return &r.o.allreduce.bucket_kb; }},
      {{"train.allreduce_overlap", kOverlapHelp}, [](T& r) -> Field { return &r.o.allreduce.overlap; }},
  };
}

TransformerConfig& transformer_of(T& r) { return r.model.transformer; }
RnnConfig& rnn_of(T& r) { return r.model.rnn; }

// The model.* keys of a translation run are the model configs' own keys (their ranges, words and
// help). The sizes, dropout, tie_output, max_len and score set the Transformer's fields, which an
// RNN copies (model_config); vocabularies and special ids come from the tokenizer, and
// share_embeddings is always on (one SentencePiece model for both sides).
void add_translation_model_keys(std::vector<ConfigKey<T>>& keys) {
  for (const char* key : {"score"})
    keys.push_back(nested_key(transformer_config_keys(), key, "model.", transformer_of));
  for (const char* key : {"rnn_cell", "bidirectional", "encoder_hidden", "input_feeding"})
    keys.push_back(nested_key(rnn_config_keys(), key, "model.", rnn_of));
  for (const char* key : {"d_model", "heads", "encoder_layers", "decoder_layers", "d_ff", "dropout", "norm_first",
                          "tie_output", "positions", "activation", "max_len"})
    keys.push_back(nested_key(transformer_config_keys(), key, "model.", transformer_of));
}

std::vector<ConfigKey<T>> make_translation_keys() {
  std::vector<ConfigKey<T>> keys = translation_data_model_keys();
  add_translation_model_keys(keys);
  for (ConfigKey<T>& k : translation_train_keys()) keys.push_back(std::move(k));
  return keys;
}

using C = ClassificationRun;

ClassifierConfig& classifier_of(C& r) { return r.o.model; }

// Task classification: seed 002's classifier; the defaults are the seed's configuration. Its
// model.* keys are the classifier config's own (vocab and classes come from the data).
std::vector<ConfigKey<C>> make_classification_keys() {
  std::vector<ConfigKey<C>> keys = {
      {{"model_dir", "output directory: config.json, model.safetensors, vocab.txt, checkpoints, train_log.jsonl"}, [](C& r) -> Field { return &r.o.model_dir; }},
      {{"data.train", "training texts, label<TAB>text a line"}, [](C& r) -> Field { return &r.o.train; }},
      {{"data.dev", "dev texts (empty: no validation)"}, [](C& r) -> Field { return &r.o.dev; }},
      {{"data.tokens", "char (one token per Unicode code point), word (whitespace) or spm (SentencePiece unigram trained on data.train, kept as model_dir/spm.model)", {}, {"char", "word", "spm"}}, [](C& r) -> Field { return &r.o.vocab.level; }},
      {{"data.spm_vocab", "pieces of the SentencePiece model (data.tokens spm)", between(4, kMaxVocab)}, [](C& r) -> Field { return &r.o.vocab.spm_vocab; }},
      {{"data.max_vocab", "vocabulary size cap, <PAD> <UNK> <CLS> included", between(4, kMaxVocab)}, [](C& r) -> Field { return &r.o.vocab.max_size; }},
      {{"data.min_count", "tokens seen fewer times in training become <UNK>", at_least(1)}, [](C& r) -> Field { return &r.o.vocab.min_count; }},
      {{"data.embeddings", "pre-trained [vocab, d_model] table: .npz (aligned by id) or word2vec text"}, [](C& r) -> Field { return &r.o.embeddings; }},
  };
  for (const char* key : {"pad_size", "d_model", "heads", "layers", "d_ff", "dropout", "pooling", "mask", "head_split",
                          "freeze_embedding"})
    keys.push_back(nested_key(classifier_config_keys(), key, "model.", classifier_of));
  std::vector<ConfigKey<C>> train = {
      {{"train.batch", "texts per batch", between(1, kMaxTokens)}, [](C& r) -> Field { return &r.o.batch; }},
      {{"train.schedule", "learning-rate schedule (the seed: constant)", {}, kSchedules}, [](C& r) -> Field { return &r.o.schedule.kind; }},
      {{"train.lr", "learning rate (peak for inverse_sqrt)", above(0)}, [](C& r) -> Field { return &r.o.schedule.lr; }},
      {{"train.lr_factor", "noam factor", above(0)}, [](C& r) -> Field { return &r.o.schedule.factor; }},
      {{"train.warmup", "warm-up batches", at_least(0)}, [](C& r) -> Field { return &r.o.schedule.warmup; }},
      {{"train.adam_beta2", "Adam beta_2 (torch.optim.Adam's default, as the seed)", fraction_below_one()}, [](C& r) -> Field { return &r.o.adam.beta2; }},
      {{"train.adam_eps", "Adam epsilon", above(0)}, [](C& r) -> Field { return &r.o.adam.eps; }},
      {{"train.weight_decay", "L2 added to the gradient", at_least(0)}, [](C& r) -> Field { return &r.o.adam.weight_decay; }},
      {{"train.clip_norm", "clip the global gradient norm (0: no clipping)", at_least(0)}, [](C& r) -> Field { return &r.o.clip_norm; }},
      {{"train.ema_decay", "keep a moving average of the weights with this decay (e.g. 0.999), validated and saved as the model; the raw weights go to model_dir/raw (0: none)", fraction_below_one()}, [](C& r) -> Field { return &r.o.ema_decay; }},
      {{"train.label_smoothing", "label smoothing of the training loss (seed: 0)", fraction_below_one()}, [](C& r) -> Field { return &r.o.label_smoothing; }},
      {{"train.max_epochs", "passes over the training set (seed: 20)", at_least(0)}, [](C& r) -> Field { return &r.o.max_epochs; }},
      {{"train.max_steps", "stop after this many batches (0: no limit)", at_least(0)}, [](C& r) -> Field { return &r.o.max_steps; }},
      {{"train.max_minutes", "stop after this much time on train.clock (0: no limit)", at_least(0)}, [](C& r) -> Field { return &r.o.max_minutes; }},
      {{"train.clock", "what train.max_minutes and the logs' elapsed count: wall time, or cpu (this process's CPU time over all threads)", {}, kClocks}, [](C& r) -> Field { return &r.o.clock; }},
      {{"train.validate_every", "batches between dev evaluations (also at each epoch's end; seed: 100)", at_least(0)}, [](C& r) -> Field { return &r.o.validate_every; }},
      {{"train.patience", "early stop after this many batches without a better dev loss (seed: 1000; 0: never)", at_least(0)}, [](C& r) -> Field { return &r.o.patience; }},
      {{"train.log_every", "batches between progress lines", at_least(1)}, [](C& r) -> Field { return &r.o.log_every; }},
      {{"train.checkpoint_every", "batches between checkpoints (also at each epoch's end)", at_least(0)}, [](C& r) -> Field { return &r.o.checkpoint_every; }},
      {{"train.keep_checkpoints", "checkpoints kept (the newest; 0: all)", at_least(0)}, [](C& r) -> Field { return &r.o.keep_checkpoints; }},
      {{"train.max_bad_steps", "batches in a row whose loss or gradient is NaN or infinite (each skipped, no update) that end the run with an error", at_least(1)}, [](C& r) -> Field { return &r.o.max_bad_steps; }},
      {{"train.seed", "seed of the initialisation, data order and dropout", at_least(0)}, [](C& r) -> Field { return &r.o.seed; }},
      {{"train.threads", "threads", between(1, kMaxThreads)}, [](C& r) -> Field { return &r.threads; }},
      {{"train.precision", kPrecisionHelp}, [](C& r) -> Field { return &r.precision; }},
      {{"train.allreduce_bucket_kb", kBucketHelp, between(1, 1 << 21)}, [](C& r) -> Field { return &r.o.allreduce.bucket_kb; }},
      {{"train.allreduce_overlap", kOverlapHelp}, [](C& r) -> Field { return &r.o.allreduce.overlap; }},
  };
  keys.insert(keys.end(), train.begin(), train.end());
  return keys;
}

// model.size: a named size gives the dimensions no model.* key gave. Returns whether the trainer
// chooses the size (auto): a Transformer, no dimension given, and a time budget to choose for.
bool apply_model_size(TranslationRun& r, const std::set<std::string>& given) {
  bool dimension_given = false;
  for (const SizeDimension& d : size_dimensions()) dimension_given = dimension_given || given.count(d.key) > 0;
  if (r.model.size != "auto") {
    check(r.model.type == ModelKind::transformer, "model.size names a Transformer's size; this run's model.type is ",
          name(r.model.type), " (set model.d_model and the layers instead)");
    TransformerConfig sized = r.model.transformer;
    apply_size(model_size(r.model.size), sized);
    for (const SizeDimension& d : size_dimensions())
      if (!given.count(d.key)) r.model.transformer.*d.field = sized.*d.field;
    return false;
  }
  check(!(given.count("model.size") && dimension_given), "model.size auto chooses the dimensions; model.d_model, ",
        "heads, layers or d_ff are given too: drop model.size=auto, or name a size (tiny, small, medium, base) ",
        "for them to override");
  return r.model.type == ModelKind::transformer && !dimension_given && r.o.max_minutes > 0;
}

// The network the model.* keys describe, of the family model.type names.
Seq2SeqConfig model_config(const ModelKeys& k, const std::set<std::string>& given) {
  static const std::vector<std::string> kTransformerOnly = {"model.heads", "model.d_ff", "model.norm_first",
                                                            "model.positions", "model.activation"};
  static const std::vector<std::string> kRnnOnly = {"model.rnn_cell", "model.bidirectional", "model.encoder_hidden",
                                                    "model.input_feeding"};
  const bool rnn = k.type == ModelKind::rnn;
  for (const std::string& key : rnn ? kTransformerOnly : kRnnOnly)
    check(!given.count(key), key, " is a key of model.type ", rnn ? "transformer" : "rnn", "; this run's model.type is ",
          name(k.type));
  TransformerConfig t = k.transformer;
  t.share_embeddings = true;  // one SentencePiece model for both sides
  if (!rnn) return t;
  RnnConfig r = k.rnn;
  r.d_model = t.d_model;
  r.encoder_layers = t.encoder_layers;
  r.decoder_layers = t.decoder_layers;
  r.dropout = t.dropout;
  r.share_embeddings = t.share_embeddings;
  r.tie_output = t.tie_output;
  r.max_len = t.max_len;
  r.score = given.count("model.score") ? t.score : ScoreKind::additive;  // Bahdanau's unless given
  return r;
}

}  // namespace

const std::vector<ConfigKey<TranslationRun>>& translation_keys() {
  static const std::vector<ConfigKey<TranslationRun>> keys = make_translation_keys();
  return keys;
}

const std::vector<ConfigKey<ClassificationRun>>& classification_keys() {
  static const std::vector<ConfigKey<ClassificationRun>> keys = make_classification_keys();
  return keys;
}

TranslationRun load_translation_run(const std::string& path, const std::vector<Override>& sets) {
  TranslationRun r;
  std::set<std::string> given = load_config(path, sets, bind(translation_keys(), r), {"task"});
  TranslationTrainOptions& o = r.o;
  o.auto_size = apply_model_size(r, given);
  // The RNN's attention is Bahdanau's unless a score is given.
  o.model = model_config(r.model, given);
  o.schedule.d_model = common_of(o.model).d_model;
  validate(o.teacher_forcing);
  check(o.schedule.decay == "none" || o.max_steps > 0 || o.max_minutes > 0 || o.max_epochs > 0,
        "train.decay '", o.schedule.decay,
        "' needs a budget to decay over: set train.max_steps, train.max_minutes or train.max_epochs, or train.decay=none");
  validate(o.model);
  return r;
}

ClassificationRun load_classification_run(const std::string& path, const std::vector<Override>& sets) {
  ClassificationRun r;
  load_config(path, sets, bind(classification_keys(), r), {"task"});
  ClassificationTrainOptions& o = r.o;
  o.schedule.d_model = o.model.d_model;
  ClassifierConfig m = o.model;
  m.vocab = 4, m.classes = 2;  // filled from the data; validated here for the other fields
  m.validate();
  return r;
}

std::string describe_defaults(const std::string& task) {
  ClassificationRun classification;
  TranslationRun translation;
  return task == "classification" ? describe(bind(classification_keys(), classification))
                                  : describe(bind(translation_keys(), translation));
}

}  // namespace attn
