// attn's translation service, the one the command line, the server, the Python module and
// training's validation call (CTranslate2's Translator, without its replicas): a model or an
// ensemble loaded in a precision, with its tokenizer and an optional shortlist. Sources, text or
// token ids, are cut to fit the model (decode/long_lines.h), read in windows of eight batches,
// sorted by length into batches of sentences or tokens, searched (decode/search.h,
// decode/ensemble.h) and returned in input order as typed results (translate/result.h).
//
//   attn::Translator t({.models = {"runs/ende"}});
//   attn::TranslateOptions o;
//   o.search.beam = 4;
//   for (const auto& r : t.translate_text({"Open the file."}, o)) std::cout << r.hypotheses[0].text << "\n";
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "attn/data/tokenizer.h"
#include "attn/decode/ensemble.h"
#include "attn/decode/search.h"
#include "attn/decode/shortlist.h"
#include "attn/decode/text.h"
#include "attn/kernels/precision.h"
#include "attn/models/seq2seq.h"
#include "attn/translate/options.h"
#include "attn/translate/result.h"

namespace attn {

// How a translator reads and writes: text through the model's SentencePiece model (an error for
// a model without one), token ids only, or text when the model has a tokenizer and ids when not.
enum class Vocabulary { text, ids, as_stored };

struct TranslatorOptions {
  std::vector<std::string> models;      // model directories; two or more: an ensemble
  std::vector<double> weights;          // the ensemble's weights of the log-probs (empty: 1/M each)
  std::optional<Precision> precision;   // empty: each model's own (config.json; fp32 if it records none)
  Vocabulary vocabulary = Vocabulary::as_stored;
  std::string shortlist;                // attn shortlist's file (empty: none)
};

// The precision `p`, or when empty the one dir/config.json records (attn convert's), fp32 if none.
Precision model_precision(const std::optional<Precision>& p, const std::string& dir);

// A source as it is translated: numbered within its input (for messages and for its sampling
// stream), in pieces within the model's positions, with its target prefix.
struct SourceLine {
  int64_t number = 0;
  std::vector<std::vector<int32_t>> pieces;  // one when it fits; none for a blank line
  std::vector<int32_t> prefix;               // the target's first tokens (its first piece's)
  size_t tokens = 0;                         // of the whole source
  bool truncated = false;                    // on_long truncate cut it
};

// The warning a cut source deserves ("" for none): `where` names it, `positions` the model's.
std::string long_line_warning(const SourceLine& line, const std::string& where, int64_t positions);

// The key of the sampling stream (decode/sampling.h) of piece `piece` of line `number`: a sample
// depends on the seed, its line and piece, never on the batch it is in.
uint64_t sampling_key(int64_t number, size_t piece);

// Text lines as token ids for scoring, `eos` appended when >= 0 (the model's source is x + eos); a
// blank source line is an error naming `name` and the line. max_len (> 0): the model's positions;
// a line that does not fit (a source with its eos, a target with the bos the decoder reads first)
// is an error naming `name`, the line and both lengths, not the model's position check.
std::vector<std::vector<int32_t>> encode_score_lines(const std::vector<std::string>& texts, const std::string& name,
                                                     const data::Tokenizer& tokenizer, int32_t eos, int64_t max_len = 0);

class Translator {
 public:
  explicit Translator(const TranslatorOptions& options);
  // A translator over models already loaded and prepared; `names` call them in messages.
  // The tokenizers may be shared with their owner (empty: token ids only).
  Translator(std::vector<Seq2Seq> models, Tokenizers tokenizers, std::vector<std::string> names,
             std::vector<double> weights = {});

  const std::vector<std::string>& dirs() const { return dirs_; }
  const std::vector<Seq2Seq>& models() const { return models_; }
  const Seq2Seq& model() const { return models_.front(); }  // the first: alignments are read from it
  Seq2SeqCommon config() const { return models_.front().common(); }
  // The source's and the target's tokenizers (one, when the vocabulary is shared), empty when
  // the translator reads token ids only.
  const Tokenizers& tokenizers() const { return tokenizers_; }
  // A side's tokenizer, or an error naming config.json when there is none.
  const data::Tokenizer& source_tokenizer() const;
  const data::Tokenizer& target_tokenizer() const;
  const Shortlist* shortlist() const { return shortlist_ ? &*shortlist_ : nullptr; }
  // Loads attn shortlist's file for every later translation that uses it.
  void load_shortlist(const std::string& path);
  // Whether searches go through the ensemble (several models, or weights given).
  bool ensemble() const { return models_.size() > 1 || !weights_.empty(); }
  const std::vector<double>& weights() const { return weights_; }
  // The first model's own defaults of the options (translate/model_defaults.h); a front end
  // starts from them (TranslateOptionsBuilder::defaults_from).
  const TranslateOptions& defaults() const { return defaults_; }
  // The ensemble's members over the models, their weights checked (empty when not an ensemble).
  std::vector<EnsembleMember> members() const;

  // The search of `o` as the models run it: o.search with the tokens they never output
  // (config.json's "suppress_ids") added. Every search of the translator (a stream's too) uses it.
  SearchOptions search_options(const TranslateOptions& o) const;

  // Checks options against the models: the maximum length within their positions.
  void check_options(const TranslateOptions& o, const OptionNameOf& name_of) const;

  // A source as text through the tokenizer (blank: no pieces) or as token ids, cut per on_long;
  // `where` names it in errors.
  SourceLine text_line(const std::string& text, int64_t number, const std::string& where, OnLong on_long) const;
  SourceLine ids_line(std::vector<int32_t> ids, int64_t number, const std::string& where, OnLong on_long) const;
  // A target prefix for `line`, as text or ids, checked (no eos, room left in the positions).
  std::vector<int32_t> text_prefix(const std::string& text, const std::string& where, const SourceLine& line) const;
  std::vector<int32_t> ids_prefix(std::vector<int32_t> ids, const std::string& where, const SourceLine& line) const;

  // Whether a window of `lines` lines holding `tokens` source tokens is full: lines are read in
  // windows of 8 batches, each sorted by length into batches (so results depend on the windows).
  static bool window_full(const TranslateOptions& o, size_t lines, size_t tokens);
  // The hypotheses of each line of one window (none for a blank line), its pieces' joined.
  std::vector<std::vector<Hypothesis>> search(const std::vector<SourceLine>& window, const TranslateOptions& o) const;
  // The same over any number of lines, window by window as attn translate reads a file.
  // `between`, when given, runs after each window but the last: a caller's chance to stop the
  // work (Python raises KeyboardInterrupt from it) without changing the windows or the results.
  std::vector<std::vector<Hypothesis>> search_all(const std::vector<SourceLine>& lines, const TranslateOptions& o,
                                                  const std::function<void()>& between = {}) const;

  // The typed result of a line from its hypotheses (alignments computed here when asked).
  TranslationResult result(const SourceLine& line, const std::vector<Hypothesis>& hyps, const TranslateOptions& o,
                           bool text) const;
  ResultReader reader(bool text) const { return {&model(), text ? &target_tokenizer() : nullptr}; }

  // Every line's typed result, searched window by window (search_all); `text`: read through the
  // tokenizer (else token ids).
  std::vector<TranslationResult> translate(const std::vector<SourceLine>& lines, const TranslateOptions& o,
                                           bool text) const;
  // Sources in, results out, in order: text (blank: no hypotheses) or token ids.
  std::vector<TranslationResult> translate_text(const std::vector<std::string>& sources,
                                                const TranslateOptions& o) const;
  std::vector<TranslationResult> translate_ids(const std::vector<std::vector<int32_t>>& sources,
                                               const TranslateOptions& o) const;

  // Each pair's total log-probability log P(y | x) (decode/score.h; an ensemble's sum_m w_m
  // score_m), in input order, batched by length, `batch` pairs a batch. `between`, when given,
  // runs after each batch but the last (as search_all's).
  std::vector<double> score(const std::vector<std::vector<int32_t>>& sources,
                            const std::vector<std::vector<int32_t>>& targets, int batch = 32,
                            const std::function<void()>& between = {}) const;

 private:
  std::vector<std::string> dirs_;
  std::vector<Seq2Seq> models_;
  std::vector<double> weights_;
  Tokenizers tokenizers_;
  // Tokens the models never output (config.json's "suppress_ids", e.g. an imported OPUS-MT
  // model's pad), added to every search's SearchOptions::suppress.
  std::vector<int32_t> suppress_;
  TranslateOptions defaults_;
  std::optional<Shortlist> shortlist_;
};

}  // namespace attn
