// Validation of a translation model on a dev set: teacher-forced loss and perplexity over every
// pair, and BLEU and chrF (sacreBLEU's definitions) of the model's own translations, made by the
// library's Translator with attn translate's options (translate/translator.h), so that a run's dev
// BLEU is the one attn translate --beam K gives its model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attn/data/batcher.h"
#include "attn/data/tokenizer.h"
#include "attn/models/seq2seq.h"

namespace attn {

struct DevSet {
  std::vector<data::Batch> batches;               // every pair that fits the model, for the loss
  std::vector<std::string> bleu_sources;            // the first N sources, raw text, for BLEU
  std::vector<std::string> bleu_refs;               // their references, raw text
  std::shared_ptr<const data::Tokenizer> tokenizer;  // the run's, for the Translator
  int64_t pairs = 0;       // lines of the dev files
  int64_t long_pairs = 0;  // pairs left out of the loss: a side longer than the model's positions
  int64_t max_tokens = 0;  // the limit they passed (0 = none)
};

// max_sentences: how many pairs are translated for BLEU (0 = all). max_tokens: the most tokens a
// side can have for the teacher-forced loss (the model's positions less the eos or bos; 0 = no
// limit): a longer pair is left out of the loss and counted, never an error that ends the run.
// BLEU still translates its source (in pieces, as attn translate does) against its reference.
DevSet load_dev_set(const std::string& src_path, const std::string& tgt_path,
                    const data::Tokenizer& tokenizer, int64_t max_sentences, int64_t max_tokens = 0);

// "dev: N pairs (K longer than M tokens on a side: left out of the loss, translated in pieces for BLEU)".
std::string describe(const DevSet& dev);

struct ValidationResult {
  double nll = 0;   // mean -log p per target token (eos included), no label smoothing
  double bleu = 0, chrf = 0;
  double seconds = 0;
};

ValidationResult run_validation(const Seq2Seq& m, const DevSet& dev, int beam);

}  // namespace attn
