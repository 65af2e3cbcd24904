#include "attn/translate/translator.h"

#include <algorithm>
#include <cstdio>

#include "attn/data/text_file.h"
#include "attn/decode/batch.h"
#include "attn/decode/ensemble.h"
#include "attn/decode/id_lines.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "attn/models/stored_precision.h"
#include "attn/translate/model_defaults.h"

namespace attn {

Precision model_precision(const std::optional<Precision>& p, const std::string& dir) {
  if (p) return *p;
  const std::string path = dir + "/config.json";
  return stored_precision(read_json_file(path), path);
}

std::string long_line_warning(const SourceLine& line, const std::string& where, int64_t positions) {
  char text[512];
  if (line.pieces.size() > 1) {
    std::snprintf(text, sizeof text,
                  "%s: %zu tokens, more than the model's %lld positions: translated in %zu pieces, joined on its "
                  "output line (--on-long split)",
                  where.c_str(), line.tokens, static_cast<long long>(positions), line.pieces.size());
    return text;
  }
  if (line.truncated) {
    std::snprintf(text, sizeof text, "%s: %zu tokens, more than the model's %lld positions: truncated to them "
                  "(--on-long truncate)", where.c_str(), line.tokens, static_cast<long long>(positions));
    return text;
  }
  return "";
}

namespace {

// config.json's "suppress_ids": token ids in the target vocabulary, or an error naming the file.
std::vector<int32_t> suppress_ids(const nlohmann::json& config, const std::string& source) {
  std::vector<int32_t> ids;
  if (!config.contains("suppress_ids")) return ids;
  const nlohmann::json& j = config["suppress_ids"];
  check(j.is_array(), source, ": \"suppress_ids\" must be a list of token ids, got ", j.dump());
  const int64_t vocab = config.value("tgt_vocab", int64_t{0});
  for (const nlohmann::json& t : j) {
    check(t.is_number_integer() && t.get<int64_t>() >= 0 && t.get<int64_t>() < vocab, source,
          ": \"suppress_ids\" holds ", t.dump(), ", not a token id of the target vocabulary of ", vocab);
    ids.push_back(t.get<int32_t>());
  }
  return ids;
}

}  // namespace

uint64_t sampling_key(int64_t number, size_t piece) { return (static_cast<uint64_t>(number - 1) << 20) | piece; }

Translator::Translator(const TranslatorOptions& options) : dirs_(options.models), weights_(options.weights) {
  check(!dirs_.empty(), "a translator needs at least one model directory");
  models_.reserve(dirs_.size());
  for (const std::string& dir : dirs_) {
    bool text = options.vocabulary == Vocabulary::text;
    const nlohmann::json config = read_json_file(dir + "/config.json");
    if (options.vocabulary == Vocabulary::as_stored) text = config.contains("tokenizer");
    for (int32_t t : suppress_ids(config, dir + "/config.json")) suppress_.push_back(t);
    if (dir == dirs_.front()) defaults_ = translate_defaults(config, dir + "/config.json");
    if (!text) {
      models_.push_back(load_seq2seq(dir));
    } else {
      TranslationModel tm = load_translation_model(dir);
      models_.push_back(std::move(tm.model));
      if (tokenizers_)
        check(tm.tokenizers.source->same_as(*tokenizers_.source) && tm.tokenizers.target->same_as(*tokenizers_.target),
              "--model ", dir, ": its tokenizer differs from the first model's (", dirs_.front(),
              "): an ensemble reads and writes one vocabulary");
      else
        tokenizers_ = std::move(tm.tokenizers);
    }
    prepare(models_.back(), model_precision(options.precision, dir), Use::inference);  // weights converted once
  }
  members();  // checks the weights and the shared vocabulary now, not at the first search
  if (!options.shortlist.empty()) load_shortlist(options.shortlist);
}

Translator::Translator(std::vector<Seq2Seq> models, Tokenizers tokenizers, std::vector<std::string> names,
                       std::vector<double> weights)
    : dirs_(std::move(names)), models_(std::move(models)), weights_(std::move(weights)),
      tokenizers_(std::move(tokenizers)) {
  check(!models_.empty() && dirs_.size() == models_.size(), "a translator needs a name for each of its models");
}

std::vector<EnsembleMember> Translator::members() const {
  if (!ensemble()) return {};
  std::vector<const Seq2Seq*> pointers;
  for (const Seq2Seq& m : models_) pointers.push_back(&m);
  return make_ensemble(pointers, weights_);
}

const data::Tokenizer& Translator::source_tokenizer() const {
  check(static_cast<bool>(tokenizers_), dirs_.front(),
        "/config.json: no \"tokenizer\" entry (a model made by import-torch has none: use --ids)");
  return *tokenizers_.source;
}

const data::Tokenizer& Translator::target_tokenizer() const {
  source_tokenizer();  // the same check
  return *tokenizers_.target;
}

SearchOptions Translator::search_options(const TranslateOptions& o) const {
  SearchOptions s = o.search;
  s.suppress.insert(s.suppress.end(), suppress_.begin(), suppress_.end());
  return s;
}

void Translator::load_shortlist(const std::string& path) {
  const Seq2SeqCommon c = config();
  shortlist_.emplace(attn::load_shortlist(path, c.src_vocab, c.tgt_vocab));
}

void Translator::check_options(const TranslateOptions& o, const OptionNameOf& name_of) const {
  for (size_t i = 0; i < models_.size(); ++i) {
    const int64_t positions = models_[i].common().max_len;
    check(o.search.max_len <= positions, name_of(translate_option("max_decoding_length")), " ",
                o.search.max_len, " is more than the model's ", positions, " positions (max_len in ", dirs_[i],
                "/config.json)");
  }
  // Alignments are read from the first model. Checked here, before a line is searched, so that a
  // layer it lacks is the request's error up front (the server: before it joins a batch), not a
  // failure after the search of every line batched with it.
  const int layers = model().cross_attention_layers();
  check(o.alignment_layer <= layers, name_of(translate_option("alignment_layer")), " ", o.alignment_layer,
        " is more than the ", layers, " encoder-decoder attention layers of the model in ", dirs_.front());
}

SourceLine Translator::text_line(const std::string& text, int64_t number, const std::string& where,
                                 OnLong on_long) const {
  SourceLine line;
  line.number = number;
  if (data::is_blank(text)) return line;
  const Seq2SeqCommon c = config();
  FittedSource f = fit_text(source_tokenizer(), text, tokenizers().source_eos ? c.eos_id : -1, static_cast<size_t>(c.max_len), on_long, where);
  line.pieces = std::move(f.pieces);
  line.tokens = f.tokens;
  line.truncated = f.truncated;
  return line;
}

SourceLine Translator::ids_line(std::vector<int32_t> ids, int64_t number, const std::string& where,
                                OnLong on_long) const {
  const Seq2SeqCommon c = config();
  check_ids(ids, c.src_vocab, where);
  SourceLine line;
  line.number = number;
  FittedSource f = fit_ids(std::move(ids), static_cast<size_t>(c.max_len), on_long, where);
  bool all_pad = !f.pieces.empty();
  for (const auto& piece : f.pieces)
    for (int32_t id : piece) all_pad = all_pad && id == c.pad_id;
  check(!all_pad, where, ": every id is the padding id ", c.pad_id, ", nothing to translate");
  line.pieces = std::move(f.pieces);
  line.tokens = f.tokens;
  line.truncated = f.truncated;
  return line;
}

std::vector<int32_t> Translator::ids_prefix(std::vector<int32_t> ids, const std::string& where,
                                            const SourceLine& line) const {
  const Seq2SeqCommon c = config();
  check_ids(ids, c.tgt_vocab, where);
  for (int32_t id : ids)
    check(id != c.eos_id, where, ": the prefix holds eos (", c.eos_id, "); a prefix is the output's start");
  check(static_cast<int64_t>(ids.size()) < c.max_len, where, ": a prefix of ", ids.size(),
              " tokens leaves no room in the model's ", c.max_len, " positions");
  check(ids.empty() || !line.pieces.empty(), where, ": a prefix for the blank input line ", line.number);
  return ids;
}

std::vector<int32_t> Translator::text_prefix(const std::string& text, const std::string& where,
                                             const SourceLine& line) const {
  return ids_prefix(target_tokenizer().encode(text), where, line);
}

bool Translator::window_full(const TranslateOptions& o, size_t lines, size_t tokens) {
  constexpr size_t kBatchesPerWindow = 8;
  return o.batch_tokens > 0 ? tokens >= static_cast<size_t>(o.batch_tokens) * kBatchesPerWindow
                            : lines >= static_cast<size_t>(o.batch) * kBatchesPerWindow;
}

std::vector<std::vector<Hypothesis>> Translator::search(const std::vector<SourceLine>& window,
                                                        const TranslateOptions& o) const {
  std::vector<std::pair<size_t, size_t>> where;  // (line, piece) of each source
  std::vector<size_t> lengths;
  for (size_t i = 0; i < window.size(); ++i)
    for (size_t j = 0; j < window[i].pieces.size(); ++j) {
      where.emplace_back(i, j);
      lengths.push_back(window[i].pieces[j].size());
    }
  std::vector<std::vector<std::vector<Hypothesis>>> parts(window.size());
  for (size_t i = 0; i < window.size(); ++i) parts[i].resize(window[i].pieces.size());
  const auto groups = o.batch_tokens > 0 ? token_sorted_batches(lengths, static_cast<size_t>(o.batch_tokens))
                                         : length_sorted_batches(lengths, static_cast<size_t>(o.batch));
  const std::vector<EnsembleMember> members = this->members();
  const Shortlist* list = o.use_shortlist ? shortlist() : nullptr;
  const Seq2SeqCommon c = config();
  const SearchOptions search = search_options(o);
  for (const auto& group : groups) {
    std::vector<std::vector<int32_t>> sources;
    SentenceInputs inputs;
    for (size_t k : group) {
      const auto [line, piece] = where[k];
      sources.push_back(window[line].pieces[piece]);
      inputs.prefixes.push_back(piece == 0 ? window[line].prefix : std::vector<int32_t>{});
      inputs.keys.push_back(sampling_key(window[line].number, piece));
    }
    // A shortlist: each sentence may output its own list (with eos and its prefix: a forced token
    // must be computable), its log-probs a softmax over it.
    if (list)
      for (size_t i = 0; i < sources.size(); ++i)
        inputs.allowed.push_back(shortlist_vocabulary(*list, {sources[i]}, {inputs.prefixes[i], {c.eos_id}}, c.tgt_vocab));
    std::vector<std::vector<Hypothesis>> out = members.empty() ? attn::search(model(), sources, search, inputs)
                                                               : attn::search(members, sources, search, inputs);
    for (size_t j = 0; j < group.size(); ++j) parts[where[group[j]].first][where[group[j]].second] = std::move(out[j]);
  }
  std::vector<std::vector<Hypothesis>> out(window.size());
  for (size_t i = 0; i < window.size(); ++i)
    if (!parts[i].empty()) out[i] = join_pieces(parts[i]);
  return out;
}

std::vector<std::vector<Hypothesis>> Translator::search_all(const std::vector<SourceLine>& lines,
                                                            const TranslateOptions& o,
                                                            const std::function<void()>& between) const {
  std::vector<std::vector<Hypothesis>> out;
  out.reserve(lines.size());
  std::vector<SourceLine> window;
  size_t tokens = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    window.push_back(lines[i]);
    for (const auto& piece : lines[i].pieces) tokens += piece.size();
    if (!window_full(o, window.size(), tokens) && i + 1 < lines.size()) continue;
    for (auto& h : search(window, o)) out.push_back(std::move(h));
    window.clear();
    tokens = 0;
    if (between && i + 1 < lines.size()) between();
  }
  return out;
}

TranslationResult Translator::result(const SourceLine& line, const std::vector<Hypothesis>& hyps,
                                     const TranslateOptions& o, bool text) const {
  const std::vector<int32_t> source = line.pieces.size() == 1 ? line.pieces.front() : std::vector<int32_t>{};
  return make_result(reader(text), o, line.number, source, hyps);
}

std::vector<TranslationResult> Translator::translate(const std::vector<SourceLine>& lines, const TranslateOptions& o,
                                                     bool text) const {
  const auto hyps = search_all(lines, o);
  std::vector<TranslationResult> out;
  out.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) out.push_back(result(lines[i], hyps[i], o, text));
  return out;
}

std::vector<TranslationResult> Translator::translate_text(const std::vector<std::string>& sources,
                                                          const TranslateOptions& o) const {
  std::vector<SourceLine> lines;
  for (size_t i = 0; i < sources.size(); ++i)
    lines.push_back(text_line(sources[i], static_cast<int64_t>(i) + 1, "sources:" + std::to_string(i + 1), o.on_long));
  return translate(lines, o, true);
}

std::vector<TranslationResult> Translator::translate_ids(const std::vector<std::vector<int32_t>>& sources,
                                                         const TranslateOptions& o) const {
  std::vector<SourceLine> lines;
  for (size_t i = 0; i < sources.size(); ++i)
    lines.push_back(ids_line(sources[i], static_cast<int64_t>(i) + 1, "sources:" + std::to_string(i + 1), o.on_long));
  return translate(lines, o, false);
}

}  // namespace attn
