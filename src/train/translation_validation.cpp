#include "attn/train/translation_validation.h"

#include <algorithm>
#include <chrono>

#include "attn/data/parallel_corpus.h"
#include "attn/data/text_file.h"
#include "attn/translate/translator.h"
#include "attn/kernels/precision.h"
#include "attn/metrics/bleu.h"
#include "attn/metrics/chrf.h"
#include "attn/ops/loss.h"

namespace attn {

DevSet load_dev_set(const std::string& src_path, const std::string& tgt_path,
                    const data::Tokenizer& tokenizer, int64_t max_sentences, int64_t max_tokens) {
  DevSet d;
  auto corpus = data::read_parallel_corpus(src_path, tgt_path, tokenizer, data::CorpusOptions::evaluation());
  d.pairs = static_cast<int64_t>(corpus.examples.size());
  d.max_tokens = max_tokens;
  std::vector<data::Example> fit;
  for (const data::Example& e : corpus.examples) {
    const bool long_pair = max_tokens > 0 && std::max(e.src.size(), e.tgt.size()) > static_cast<size_t>(max_tokens);
    if (long_pair) ++d.long_pairs;
    else fit.push_back(e);
  }
  d.batches = data::batches_in_order(fit, 4096);
  std::vector<std::string> sources = data::read_lines(src_path), refs = data::read_lines(tgt_path);
  for (const auto& e : corpus.examples) {
    if (max_sentences > 0 && static_cast<int64_t>(d.bleu_sources.size()) >= max_sentences) break;
    d.bleu_sources.push_back(sources[e.line]);
    d.bleu_refs.push_back(refs[e.line]);
  }
  d.tokenizer = std::make_shared<const data::Tokenizer>(
      data::Tokenizer::from_serialized(tokenizer.serialized(), tokenizer.name()));
  return d;
}

std::string describe(const DevSet& dev) {
  std::string s = "dev: " + std::to_string(dev.pairs) + " pairs";
  if (dev.long_pairs > 0)
    s += " (" + std::to_string(dev.long_pairs) + " longer than " + std::to_string(dev.max_tokens) +
         " tokens on a side, the model's positions: left out of the dev loss, translated in pieces for BLEU)";
  return s;
}

ValidationResult run_validation(const Seq2Seq& trained, const DevSet& dev, int beam) {
  auto t0 = std::chrono::steady_clock::now();
  NoGrad no_grad;
  // the f32 master weights, whatever precision trains them
  const Seq2Seq m = prepared(trained, Precision::fp32, Use::training);
  Context ctx;
  ValidationResult r;
  double nll = 0;
  int64_t count = 0;
  for (const data::Batch& b : dev.batches) {
    Var logits = seq2seq_logits(m, b.src, b.tgt_in, ctx);
    CrossEntropyStats s;
    cross_entropy(logits, b.tgt_out, 0.0f, m.common().pad_id, &s);
    nll += s.nll_sum;
    count += s.count;
  }
  r.nll = count ? nll / static_cast<double>(count) : 0.0;
  // attn translate --beam K on the dev sources: its windows and batches, length penalty and
  // maximum length; a source longer than the model's positions is translated in pieces.
  TranslateOptions o;
  o.search.beam = beam;
  const Translator translator({m}, Tokenizers{dev.tokenizer, dev.tokenizer}, {"the model being trained"});
  std::vector<std::string> hyps;
  for (const TranslationResult& t : translator.translate_text(dev.bleu_sources, o))
    hyps.push_back(t.hypotheses.empty() ? std::string() : t.hypotheses.front().text);
  r.bleu = metrics::corpus_bleu(hyps, dev.bleu_refs).score;
  r.chrf = metrics::corpus_chrf(hyps, dev.bleu_refs);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace attn
