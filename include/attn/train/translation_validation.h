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
  std::vector<data::Batch> batches;               // every pair, for the loss
  std::vector<std::string> bleu_sources;            // the first N sources, raw text, for BLEU
  std::vector<std::string> bleu_refs;               // their references, raw text
  std::shared_ptr<const data::Tokenizer> tokenizer;  // the run's, for the Translator
};

// max_sentences: how many pairs are translated for BLEU (0 = all).
DevSet load_dev_set(const std::string& src_path, const std::string& tgt_path,
                    const data::Tokenizer& tokenizer, int64_t max_sentences);

struct ValidationResult {
  double nll = 0;   // mean -log p per target token (eos included), no label smoothing
  double bleu = 0, chrf = 0;
  double seconds = 0;
};

ValidationResult run_validation(const Seq2Seq& m, const DevSet& dev, int beam);

}  // namespace attn
