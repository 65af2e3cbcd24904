// Training a translation model (the paper's recipe, §5): SentencePiece vocabulary, batches by
// tokens, Adam with the warm-up schedule, label smoothing, dropout, gradient accumulation,
// crash-safe checkpoints with an exact resume, validation (loss, perplexity, BLEU, chrF) with
// the best model kept and early stopping.
#pragma once

#include <string>

#include "attn/kernels/precision.h"
#include "attn/models/scheduled_sampling.h"
#include "attn/models/transformer_config.h"
#include "attn/train/schedule.h"
#include "attn/train/progress.h"

namespace attn {

struct TranslationTrainOptions {
  std::string model_dir;  // output: the best (or last) model, checkpoints, logs
  std::string train_src, train_tgt, valid_src, valid_tgt;

  std::string tokenizer;  // an existing SentencePiece .model; empty: train one on the training text
  int vocab_size = 8000;
  std::string tokenizer_type = "unigram";
  int64_t tokenizer_sentences = 0;  // lines sampled to train it; 0 = all
  int64_t max_len = 128;            // training pairs longer than this (tokens) are skipped

  TransformerConfig model;

  int64_t max_tokens = 4096;  // per batch and side
  int accumulate = 1;         // batches per optimizer step
  LrSchedule schedule;
  float label_smoothing = 0.1f;
  TeacherForcingSchedule teacher_forcing;  // 1.0: teacher forcing; less: scheduled sampling
  double clip_norm = 0.0;     // 0: no clipping
  int64_t max_steps = 0;      // budgets (0 = none); training stops at the first reached
  double max_minutes = 0.0;
  BudgetClock clock = BudgetClock::wall;  // what max_minutes (and elapsed) count: wall or CPU time
  int64_t max_epochs = 0;
  uint64_t seed = 1;
  Precision precision = Precision::fp32;  // of the products in training (fp32 or bf16); validation runs in fp32

  int64_t log_every = 50;
  int64_t checkpoint_every = 0;      // steps (0: by time only)
  double checkpoint_minutes = 10.0;  // 0: by steps only
  int keep_checkpoints = 3;
  int64_t validate_every = 500;      // steps; 0: only at the end
  int patience = 0;                  // early stopping after this many validations without a better BLEU
  int valid_beam = 1;
  int64_t valid_sentences = 0;       // dev sentences decoded for BLEU (0 = all)
  bool resume = false;
};

void train_translation(const TranslationTrainOptions& options);

}  // namespace attn
