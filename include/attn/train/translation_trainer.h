// Training a translation model (the paper's recipe, §5): SentencePiece vocabulary, batches by
// tokens, Adam with the warm-up schedule, label smoothing, dropout, gradient accumulation,
// crash-safe checkpoints with an exact resume, validation (loss, perplexity, BLEU, chrF) with
// the best model kept and early stopping.
#pragma once

#include <string>

#include "attn/kernels/precision.h"
#include "attn/models/scheduled_sampling.h"
#include "attn/models/seq2seq.h"
#include "attn/train/checkpoint.h"
#include "attn/train/distributed.h"
#include "attn/train/schedule.h"
#include "attn/train/progress.h"

namespace attn {

// The defaults are `attn train`'s recipe (its --help-config prints them from these initialisers):
// a small pre-LN Transformer on the shipped English->German corpus.
struct TranslationTrainOptions {
  std::string model_dir = "runs/ende";  // output: the best (or last) model, checkpoints, logs
  std::string train_src = "data/mt-ende/train.en", train_tgt = "data/mt-ende/train.de";
  std::string valid_src = "data/mt-ende/dev.en", valid_tgt = "data/mt-ende/dev.de";  // empty: no validation

  std::string tokenizer;  // an existing SentencePiece .model; empty: train one on the training text
  int vocab_size = 8000;
  std::string tokenizer_type = "unigram";
  int64_t tokenizer_sentences = 100000;  // lines sampled to train it; 0 = all
  int64_t max_len = 128;                 // training pairs longer than this (tokens) are skipped

  // The network, of either family; the vocabulary sizes and special ids are the tokenizer's.
  Seq2SeqConfig model = TransformerConfig{.d_model = 256, .heads = 4, .encoder_layers = 3, .decoder_layers = 3,
                                          .d_ff = 1024, .dropout = 0.0f, .norm_first = true, .max_len = 512};

  // model.size auto (train/model_size.h): `model` is the reference size; the run's first steps
  // measure its step rate on train.clock and the rule picks the size for the time budget left.
  bool auto_size = false;

  int64_t max_tokens = 2048;  // per batch and side
  int accumulate = 1;         // batches per optimizer step (all ranks together: a multiple of the ranks)
  LrSchedule schedule{.warmup = 400, .d_model = 256, .decay = "linear"};  // d_model follows model.d_model
  float label_smoothing = 0.1f;
  TeacherForcingSchedule teacher_forcing;  // 1.0: teacher forcing; less: scheduled sampling
  double clip_norm = 0.0;     // 0: no clipping
  // A moving average of the weights (train/ema.h), validated and saved as the model, the raw
  // weights beside it in model_dir/raw/; 0: none.
  double ema_decay = 0.0;
  int64_t max_steps = 0;      // budgets (0 = none); training stops at the first reached
  double max_minutes = 0.0;
  BudgetClock clock = BudgetClock::wall;  // what max_minutes (and elapsed) count: wall or CPU time
  int64_t max_epochs = 0;
  uint64_t seed = 1;
  Precision precision = Precision::fp32;  // of the products in training (fp32 or bf16); validation runs in fp32

  int64_t log_every = 50;
  int64_t checkpoint_every = 0;      // steps (0: by time only)
  double checkpoint_minutes = 15.0;  // 0: by steps only
  int keep_checkpoints = kKeepCheckpoints;
  int64_t max_bad_steps = 5;         // NaN/Inf steps in a row (each skipped) that end the run with an error
  int64_t validate_every = 500;      // steps; 0: only at the end
  int patience = 0;                  // early stopping after this many validations without a better BLEU
  int valid_beam = 1;
  int64_t valid_sentences = 500;     // dev sentences decoded for BLEU (0 = all)
  bool resume = false;
  // The ranks of a data-parallel run (train/distributed.h); one process by default.
  Communicator comm;
  AllreduceOptions allreduce;
};

void train_translation(const TranslationTrainOptions& options);

}  // namespace attn
