// attn train --config FILE [--set key=value ...]: the documented configuration keys of each task
// and their mapping onto the trainers' option structs.
#include <cstdio>

#include "attn/cli/args.h"
#include "attn/cli/config.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/yaml.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/precision.h"
#include "attn/train/classification_trainer.h"
#include "attn/train/translation_trainer.h"

namespace attn::cli {
namespace {

using nlohmann::json;

std::vector<ConfigKey> translation_schema() {
  return {
      {"task", "translation", "what to train: translation"},
      {"model_dir", "runs/ende", "output directory: model, tokenizer, checkpoints, train_log.jsonl"},
      {"data.train_src", "data/mt-ende/train.en", "training source text, one sentence a line"},
      {"data.train_tgt", "data/mt-ende/train.de", "training target text, aligned with train_src"},
      {"data.valid_src", "data/mt-ende/dev.en", "dev source text (empty: no validation)"},
      {"data.valid_tgt", "data/mt-ende/dev.de", "dev target text"},
      {"data.tokenizer", json(), "an existing SentencePiece .model (unset: train one)"},
      {"data.vocab_size", 8000, "pieces of the SentencePiece model trained when none is given"},
      {"data.tokenizer_type", "unigram", "unigram or bpe"},
      {"data.tokenizer_sentences", 100000, "lines sampled (from both sides) to train the tokenizer (0: all)"},
      {"data.max_len", 128, "training pairs with more tokens than this on a side are skipped"},
      {"model.type", "transformer", "transformer, or rnn: seed 003's RNN encoder-decoder (shortcut --set model=rnn)"},
      {"model.score", json(), "attention score: scaled_dot, dot, additive (Bahdanau) or bilinear (Luong general); unset: scaled_dot, additive for rnn"},
      {"model.rnn_cell", "lstm", "rnn: lstm or gru"},
      {"model.bidirectional", true, "rnn: bidirectional encoder"},
      {"model.encoder_hidden", 0, "rnn: units per encoder direction (0: d_model / directions)"},
      {"model.input_feeding", true, "rnn: the attention context c_t is part of the decoder's input"},
      {"model.d_model", 256, "d_model (rnn: embedding and decoder size)"},
      {"model.heads", 4, "h, attention heads (d_k = d_model / h)"},
      {"model.encoder_layers", 3, "N of the encoder"},
      {"model.decoder_layers", 3, "N of the decoder"},
      {"model.d_ff", 1024, "inner size of the position-wise FFN"},
      {"model.dropout", 0.0, "P_drop: embeddings, attention weights, FFN inner, sub-layer outputs"},
      {"model.norm_first", true, "pre-LN (LayerNorm before each sub-layer) instead of post-LN"},
      {"model.tie_output", true, "output projection tied to the target embedding"},
      {"model.positions", "sinusoidal", "sinusoidal or learned"},
      {"model.activation", "relu", "relu or gelu"},
      {"model.max_len", 512, "longest sequence the positions cover"},
      {"train.max_tokens", 2048, "tokens per batch and side (padded batch size * length)"},
      {"train.accumulate", 1, "batches per optimizer step (gradient accumulation)"},
      {"train.schedule", "noam", "noam (the paper), constant or inverse_sqrt"},
      {"train.decay", "linear", "none, linear or cosine: the schedule times (1 - p) or (1 + cos(pi p)) / 2, p the fraction of the budget used (the largest of steps, time and epochs)"},
      {"train.lr_factor", 1.0, "noam: lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)"},
      {"train.lr", 5e-4, "constant and inverse_sqrt: the peak learning rate"},
      {"train.warmup", 400, "warm-up steps"},
      {"train.label_smoothing", 0.1, "epsilon_ls"},
      {"train.teacher_forcing", 1.0, "probability of feeding the gold previous token (1: teacher forcing, 0: free-running)"},
      {"train.teacher_forcing_min", 0.0, "where the teacher_forcing_schedule decays to"},
      {"train.teacher_forcing_schedule", "constant", "scheduled sampling: constant, linear, inverse_sigmoid or exponential"},
      {"train.teacher_forcing_steps", 10000.0, "linear: steps to decay; inverse_sigmoid: k; exponential: time constant"},
      {"train.clip_norm", 0.0, "clip the global gradient norm to this (0: no clipping)"},
      {"train.max_steps", 0, "stop after this many optimizer steps (0: no limit)"},
      {"train.max_minutes", 0.0, "stop after this much time on train.clock, validation included (0: no limit)"},
      {"train.clock", "wall", "what train.max_minutes, checkpoint_minutes, decay and the logs' elapsed count: wall time, or cpu (this process's CPU time over all threads; a loaded or oversubscribed machine does not stretch it)"},
      {"train.max_epochs", 0, "stop after this many passes over the data (0: no limit)"},
      {"train.seed", 1, "seed of the initialisation, data order and dropout"},
      {"train.threads", 2, "threads"},
      {"train.precision", "auto", "fp32, bf16 (the products of linear layers and matmuls in bfloat16 with f32 accumulation; weights, gradients, Adam, norms and loss stay f32; validation runs in fp32), or auto: bf16 where the CPU multiplies bf16 natively (AVX512-BF16, AMX), else fp32"},
      {"train.log_every", 50, "steps between progress lines"},
      {"train.checkpoint_every", 0, "steps between checkpoints (0: by time only)"},
      {"train.checkpoint_minutes", 15.0, "minutes between checkpoints (0: by steps only)"},
      {"train.keep_checkpoints", 5, "checkpoints kept (the newest)"},
      {"train.validate_every", 500, "steps between validations (0: only at the end)"},
      {"train.patience", 0, "early stopping after this many validations without a better dev BLEU (0: never)"},
      {"train.valid_beam", 1, "beam used to translate the dev set for BLEU (1: greedy)"},
      {"train.valid_sentences", 500, "dev sentences translated for BLEU (0: all)"},
  };
}

TranslationTrainOptions translation_options(const Config& c) {
  TranslationTrainOptions o;
  o.model_dir = c.str("model_dir");
  o.train_src = c.str("data.train_src");
  o.train_tgt = c.str("data.train_tgt");
  o.valid_src = c.str("data.valid_src");
  o.valid_tgt = c.str("data.valid_tgt");
  o.tokenizer = c.str("data.tokenizer");
  o.vocab_size = static_cast<int>(c.integer("data.vocab_size"));
  o.tokenizer_type = c.str("data.tokenizer_type");
  o.tokenizer_sentences = c.integer("data.tokenizer_sentences");
  o.max_len = c.integer("data.max_len");
  TransformerConfig& m = o.model;
  m.model = c.str("model.type");
  m.score = c.is_set("model.score") ? c.str("model.score") : m.model == "rnn" ? "additive" : "scaled_dot";
  m.rnn_cell = c.str("model.rnn_cell");
  m.bidirectional = c.flag("model.bidirectional");
  m.encoder_hidden = c.integer("model.encoder_hidden");
  m.input_feeding = c.flag("model.input_feeding");
  m.d_model = c.integer("model.d_model");
  m.heads = c.integer("model.heads");
  m.encoder_layers = c.integer("model.encoder_layers");
  m.decoder_layers = c.integer("model.decoder_layers");
  m.d_ff = c.integer("model.d_ff");
  m.dropout = static_cast<float>(c.real("model.dropout"));
  m.norm_first = c.flag("model.norm_first");
  m.share_embeddings = true;  // one SentencePiece model for both sides
  m.tie_output = c.flag("model.tie_output");
  m.positions = c.str("model.positions");
  m.activation = c.str("model.activation");
  m.max_len = c.integer("model.max_len");
  o.max_tokens = c.integer("train.max_tokens");
  o.accumulate = static_cast<int>(c.integer("train.accumulate"));
  o.schedule.kind = c.str("train.schedule");
  o.schedule.factor = c.real("train.lr_factor");
  o.schedule.lr = c.real("train.lr");
  o.schedule.warmup = c.integer("train.warmup");
  o.schedule.d_model = m.d_model;
  o.schedule.decay = c.str("train.decay");
  o.label_smoothing = static_cast<float>(c.real("train.label_smoothing"));
  o.teacher_forcing = {c.str("train.teacher_forcing_schedule"), c.real("train.teacher_forcing"),
                       c.real("train.teacher_forcing_min"), c.real("train.teacher_forcing_steps")};
  validate(o.teacher_forcing);
  o.clip_norm = c.real("train.clip_norm");
  o.max_steps = c.integer("train.max_steps");
  o.max_minutes = c.real("train.max_minutes");
  o.clock = parse_budget_clock(c.str("train.clock"));
  o.max_epochs = c.integer("train.max_epochs");
  o.seed = static_cast<uint64_t>(c.integer("train.seed"));
  o.log_every = std::max<int64_t>(1, c.integer("train.log_every"));
  o.checkpoint_every = c.integer("train.checkpoint_every");
  o.checkpoint_minutes = c.real("train.checkpoint_minutes");
  o.keep_checkpoints = static_cast<int>(c.integer("train.keep_checkpoints"));
  o.validate_every = c.integer("train.validate_every");
  o.patience = static_cast<int>(c.integer("train.patience"));
  o.valid_beam = static_cast<int>(c.integer("train.valid_beam"));
  o.valid_sentences = c.integer("train.valid_sentences");
  check(o.schedule.kind == "noam" || o.schedule.kind == "constant" || o.schedule.kind == "inverse_sqrt",
        "train.schedule must be noam, constant or inverse_sqrt, got '", o.schedule.kind, "'");
  check(o.schedule.decay == "none" || o.schedule.decay == "linear" || o.schedule.decay == "cosine",
        "train.decay must be none, linear or cosine, got '", o.schedule.decay, "'");
  check(o.schedule.decay == "none" || o.max_steps > 0 || o.max_minutes > 0 || o.max_epochs > 0,
        "train.decay '", o.schedule.decay,
        "' needs a budget to decay over: set train.max_steps, train.max_minutes or train.max_epochs, or train.decay=none");
  o.model.validate();
  return o;
}

// Task classification: seed 002's classifier; the defaults are the seed's configuration.
std::vector<ConfigKey> classification_schema() {
  return {
      {"task", "classification", "what to train: classification"},
      {"model_dir", "runs/cls", "output directory: config.json, model.safetensors, vocab.txt, checkpoints, train_log.jsonl"},
      {"data.train", "data/cls-zh-poetry/train.tsv", "training texts, label<TAB>text a line"},
      {"data.dev", "data/cls-zh-poetry/dev.tsv", "dev texts (empty: no validation)"},
      {"data.tokens", "char", "char (one token per Unicode code point), word (whitespace) or spm (SentencePiece unigram trained on data.train, kept as model_dir/spm.model)"},
      {"data.spm_vocab", 8000, "pieces of the SentencePiece model (data.tokens spm)"},
      {"data.max_vocab", 10000, "vocabulary size cap, <PAD> <UNK> <CLS> included"},
      {"data.min_count", 1, "tokens seen fewer times in training become <UNK>"},
      {"data.embeddings", json(), "pre-trained [vocab, d_model] table: .npz (aligned by id) or word2vec text"},
      {"model.pad_size", 32, "every text cut or padded to this many tokens"},
      {"model.d_model", 300, "embedding and model width"},
      {"model.heads", 5, "attention heads"},
      {"model.layers", 2, "encoder layers (the seed's code: 2; its text: 5)"},
      {"model.d_ff", 1024, "FFN inner size"},
      {"model.dropout", 0.5, "dropout after positions and on each sub-layer output"},
      {"model.pooling", "flatten", "flatten ([batch, pad_size*d], the seed), mean or cls"},
      {"model.mask", false, "key-padding mask in attention (the seed has none)"},
      {"model.head_split", "standard", "standard, or seed (the seed's view(batch*heads, -1, d_k))"},
      {"model.freeze_embedding", false, "keep the pre-trained embeddings fixed"},
      {"train.batch", 128, "texts per batch"},
      {"train.schedule", "constant", "constant (seed), noam or inverse_sqrt"},
      {"train.lr", 5e-4, "learning rate (peak for inverse_sqrt)"},
      {"train.lr_factor", 1.0, "noam factor"},
      {"train.warmup", 0, "warm-up batches"},
      {"train.adam_beta2", 0.999, "Adam beta_2 (torch.optim.Adam's default, as the seed)"},
      {"train.adam_eps", 1e-8, "Adam epsilon"},
      {"train.weight_decay", 0.0, "L2 added to the gradient"},
      {"train.clip_norm", 0.0, "clip the global gradient norm (0: no clipping)"},
      {"train.label_smoothing", 0.0, "label smoothing of the training loss (seed: 0)"},
      {"train.max_epochs", 20, "passes over the training set (seed: 20)"},
      {"train.max_steps", 0, "stop after this many batches (0: no limit)"},
      {"train.max_minutes", 0.0, "stop after this much time on train.clock (0: no limit)"},
      {"train.clock", "wall", "what train.max_minutes and the logs' elapsed count: wall time, or cpu (this process's CPU time over all threads)"},
      {"train.validate_every", 100, "batches between dev evaluations (also at each epoch's end; seed: 100)"},
      {"train.patience", 1000, "early stop after this many batches without a better dev loss (seed: 1000; 0: never)"},
      {"train.log_every", 50, "batches between progress lines"},
      {"train.checkpoint_every", 0, "batches between checkpoints (also at each epoch's end)"},
      {"train.keep_checkpoints", 2, "checkpoints kept"},
      {"train.seed", 1, "seed of the initialisation, data order and dropout"},
      {"train.threads", 2, "threads"},
      {"train.precision", "fp32", "fp32, bf16 (the products of linear layers and matmuls in bfloat16 with f32 accumulation; weights, gradients, Adam, norms and loss stay f32; validation runs in fp32), or auto: bf16 where the CPU multiplies bf16 natively (AVX512-BF16, AMX), else fp32"},
  };
}

ClassificationTrainOptions classification_options(const Config& c) {
  ClassificationTrainOptions o;
  o.model_dir = c.str("model_dir");
  o.train = c.str("data.train");
  o.dev = c.is_set("data.dev") ? c.str("data.dev") : "";
  o.vocab.level = c.str("data.tokens");
  o.vocab.max_size = c.integer("data.max_vocab");
  o.vocab.min_count = c.integer("data.min_count");
  o.vocab.spm_vocab = static_cast<int>(c.integer("data.spm_vocab"));
  o.embeddings = c.is_set("data.embeddings") ? c.str("data.embeddings") : "";
  ClassifierConfig& m = o.model;
  m.pad_size = c.integer("model.pad_size");
  m.d_model = c.integer("model.d_model");
  m.heads = c.integer("model.heads");
  m.layers = c.integer("model.layers");
  m.d_ff = c.integer("model.d_ff");
  m.dropout = static_cast<float>(c.real("model.dropout"));
  m.pooling = c.str("model.pooling");
  m.mask = c.flag("model.mask");
  m.head_split = c.str("model.head_split");
  m.freeze_embedding = c.flag("model.freeze_embedding");
  o.batch = c.integer("train.batch");
  o.schedule = {c.str("train.schedule"), c.real("train.lr_factor"), c.real("train.lr"), c.integer("train.warmup"),
                m.d_model};
  o.adam.beta2 = static_cast<float>(c.real("train.adam_beta2"));
  o.adam.eps = static_cast<float>(c.real("train.adam_eps"));
  o.adam.weight_decay = static_cast<float>(c.real("train.weight_decay"));
  o.clip_norm = c.real("train.clip_norm");
  o.label_smoothing = static_cast<float>(c.real("train.label_smoothing"));
  o.max_epochs = c.integer("train.max_epochs");
  o.max_steps = c.integer("train.max_steps");
  o.max_minutes = c.real("train.max_minutes");
  o.clock = parse_budget_clock(c.str("train.clock"));
  o.validate_every = c.integer("train.validate_every");
  o.patience = c.integer("train.patience");
  o.log_every = std::max<int64_t>(1, c.integer("train.log_every"));
  o.checkpoint_every = c.integer("train.checkpoint_every");
  o.keep_checkpoints = static_cast<int>(c.integer("train.keep_checkpoints"));
  o.seed = static_cast<uint64_t>(c.integer("train.seed"));
  check(o.vocab.level == "char" || o.vocab.level == "word" || o.vocab.level == "spm",
        "data.tokens must be char, word or spm, got '", o.vocab.level, "'");
  check(o.label_smoothing >= 0.0f && o.label_smoothing < 1.0f, "train.label_smoothing must be in [0, 1), got ",
        o.label_smoothing);
  check(o.schedule.kind == "noam" || o.schedule.kind == "constant" || o.schedule.kind == "inverse_sqrt",
        "train.schedule must be noam, constant or inverse_sqrt, got '", o.schedule.kind, "'");
  m.vocab = 4, m.classes = 2;  // filled from the data; validated here for the other fields
  m.validate();
  return o;
}

// The task a command line asks for: --set task=..., else the config file's task key.
std::string requested_task(const std::string& config_path, const std::vector<std::string>& sets) {
  std::string task = "translation";
  if (!config_path.empty()) {
    json j = io::parse_yaml(io::read_file(config_path), config_path);
    if (j.is_object() && j.contains("task") && j["task"].is_string()) task = j["task"].get<std::string>();
  }
  for (const std::string& s : sets)
    if (s.rfind("task=", 0) == 0) task = s.substr(5);
  check(task == "translation" || task == "classification", "task '", task, "' is not known (translation, classification)");
  return task;
}

}  // namespace

int run_train(int argc, char** argv) {
  Args args("train", "Trains a model from a config file (YAML or JSON) and --set overrides.\n"
                     "Without --config the defaults train an English->German model on the\n"
                     "shipped corpus (scripts/data.sh unpacks it into data/mt-ende). attn train\n--help-config lists every key; with --set task=classification (or task:\nclassification in the config) it trains seed 002's text classifier.");
  args.option("config", "YAML or JSON config file")
      .repeated("set", "key=value override, e.g. --set train.warmup=800 (repeatable)")
      .option("max-steps", "shortcut for --set train.max_steps=N")
      .option("max-minutes", "shortcut for --set train.max_minutes=M")
      .option("model-dir", "shortcut for --set model_dir=DIR")
      .option("threads", "shortcut for --set train.threads=N")
      .option("precision", "shortcut for --set train.precision=fp32|bf16|auto")
      .flag("resume", "continue from the newest checkpoint in model_dir, exactly")
      .flag("help-config", "list every configuration key with its default and meaning");
  if (!args.parse(argc, argv)) return 0;
  std::vector<std::string> sets = args.all("set");
  if (args.has("max-steps")) sets.push_back("train.max_steps=" + args.str("max-steps"));
  if (args.has("max-minutes")) sets.push_back("train.max_minutes=" + args.str("max-minutes"));
  if (args.has("model-dir")) sets.push_back("model_dir=" + args.str("model-dir"));
  if (args.has("threads")) sets.push_back("train.threads=" + args.str("threads"));
  if (args.has("precision")) sets.push_back("train.precision=" + args.str("precision"));
  for (std::string& s : sets)  // --set model=rnn: the model family (model.* are its settings)
    if (s.rfind("model=", 0) == 0) s = "model.type=" + s.substr(6);
  std::string task = requested_task(args.str("config"), sets);
  auto schema = task == "classification" ? classification_schema() : translation_schema();
  if (args.on("help-config")) {
    std::printf("task: %s\n%s", task.c_str(), describe(schema).c_str());
    return 0;
  }
  Config c = Config::load(args.str("config"), sets, schema);
  set_num_threads(static_cast<int>(c.integer("train.threads")));
  const Precision precision = parse_training_precision(c.str("train.precision"));
  if (c.str("train.precision") == "auto")
    std::fprintf(stderr, "precision: %s (auto: this CPU %s bf16 natively)\n", precision_name(precision),
                 precision == Precision::bf16 ? "multiplies" : "does not multiply");
  else if (precision == Precision::bf16 && !onednn_has_bf16_matmul())
    std::fprintf(stderr, "precision: bf16 on a CPU without bf16 products: the bf16-rounded operands are "
                         "multiplied in f32 (bf16's numbers, f32's speed)\n");
  if (task == "classification") {
    ClassificationTrainOptions o = classification_options(c);
    o.precision = precision;
    o.resume = args.on("resume");
    train_classifier(o);
    return 0;
  }
  TranslationTrainOptions o = translation_options(c);
  o.precision = precision;
  o.resume = args.on("resume");
  train_translation(o);
  return 0;
}

}  // namespace attn::cli
