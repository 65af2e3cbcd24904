#include "translate_request.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "attn/decode/id_lines.h"
#include "attn/decode/long_lines.h"
#include "attn/error.h"
#include "translate_flags.h"

namespace attn::serve {
namespace {

using Type = cli::OptionName::Type;

constexpr int kMaxBeam = 64;  // the server's own bound on beam and n_best: the memory of one request

// The API's short names first (what an error message calls a flag the body did not give), then
// CTranslate2's.
const std::vector<cli::OptionName>& field_names() {
  static const std::vector<cli::OptionName> names = [] {
    std::vector<cli::OptionName> n = {{"beam", "--beam", Type::whole},
                                      {"n_best", "--n-best", Type::whole},
                                      {"max_len", "--max-len", Type::whole}};
    const auto& ct2 = cli::translate_option_names();
    n.insert(n.end(), ct2.begin(), ct2.end());
    return n;
  }();
  return names;
}

// The fields of a translate body besides the decoding options; any other is a 400 (a misspelt
// option would otherwise be ignored without a word).
const std::set<std::string> kOtherFields = {"model", "text", "ids", "target_prefix", "alignment", "alignment_words",
                                            "attention", "use_vmap"};

// body[o.name] as the flag's text, after checking its JSON type (the parser only sees text).
std::string flag_value(const nlohmann::json& v, const cli::OptionName& o) {
  const std::string field = "\"" + o.name + "\"";
  if (o.type == Type::text) {
    if (!v.is_string()) throw HttpError(400, field + " must be a string, got " + shown(v));
    return v.get<std::string>();
  }
  if (o.type == Type::whole) {
    if (!v.is_number_integer()) throw HttpError(400, field + " must be a whole number, got " + shown(v));
    return v.dump();
  }
  if (!v.is_number()) throw HttpError(400, field + " must be a number, got " + shown(v));
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v.get<double>());
  return text;
}

// The parser's message with every flag named as the body's field (`fields`: flag -> field) and
// without its pointer to --help.
std::string as_fields(std::string message, const std::map<std::string, std::string>& fields) {
  const std::string hint = " (see attn translate --help)";
  if (const size_t at = message.find(hint); at != std::string::npos) message.erase(at, hint.size());
  std::vector<std::pair<std::string, std::string>> by_length(fields.begin(), fields.end());
  std::sort(by_length.begin(), by_length.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [flag, field] : by_length)
    for (size_t at = message.find(flag); at != std::string::npos; at = message.find(flag, at + 1)) {
      const size_t end = at + flag.size();
      if (end < message.size() && (message[end] == '-' || std::isalnum(static_cast<unsigned char>(message[end])))) continue;
      message.replace(at, flag.size(), "\"" + field + "\"");
    }
  return message;
}

// Requests mostly repeat a few sets of options, and the parser builds every option of attn
// translate at each call (keeping them: 1.05-1.40x sentences/s, greedy on a tiny model, 32
// clients): the flags of arguments that parsed are kept, at most 256 sets (arguments that fail
// are parsed each time).
class ParsedFlags {
 public:
  std::optional<cli::TranslateFlags> find(const std::vector<std::string>& args) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = kept_.find(args);
    return it == kept_.end() ? std::nullopt : std::optional<cli::TranslateFlags>(it->second);
  }
  void keep(std::vector<std::string> args, const cli::TranslateFlags& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.size() >= 256) kept_.clear();
    kept_.emplace(std::move(args), f);
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, cli::TranslateFlags> kept_;
};

ParsedFlags& parsed_flags() {
  static ParsedFlags p;
  return p;
}

// The body's options as attn translate's flags, parsed and checked by its parser.
cli::TranslateFlags parse_options(const nlohmann::json& body, const ServedModel& m) {
  std::vector<std::string> args = {"attn translate", "--model", m.dir, "--output-format", "jsonl"};
  std::map<std::string, std::string> given;  // flag -> the field that gave it
  for (const cli::OptionName& o : field_names()) {
    if (!body.contains(o.name)) continue;
    if (const auto [it, fresh] = given.emplace(o.flag, o.name); !fresh)
      throw HttpError(400, "\"" + it->second + "\" and \"" + o.name + "\" are the same option: give one");
    args.insert(args.end(), {o.flag, flag_value(body[o.name], o)});
  }
  if (body.contains("ids")) args.push_back("--ids");
  if (body.contains("alignment")) {
    const nlohmann::json& a = body["alignment"];
    if (!a.is_boolean() && !a.is_string())
      throw HttpError(400, "\"alignment\" must be true, false, \"hard\" or \"soft\", got " + shown(a));
    if (a.is_string() || a.get<bool>()) args.insert(args.end(), {"--alignment", a.is_string() ? a.get<std::string>() : "hard"});
  }
  if (bool_field(body, "alignment_words", false)) args.push_back("--alignment-words");
  if (std::optional<cli::TranslateFlags> known = parsed_flags().find(args)) return *known;
  cli::TranslateFlags f;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  try {
    cli::parse_translate_flags(static_cast<int>(argv.size()), argv.data(), f);
    cli::check_max_len(f.search.max_len, *m.seq2seq, m.dir);
  } catch (const Error& e) {
    // each flag named as the body's field: the one that gave it, else the API's short name
    std::map<std::string, std::string> fields = {{"--alignment", "alignment"}, {"--alignment-words", "alignment_words"}};
    for (const cli::OptionName& o : field_names()) fields.emplace(o.flag, o.name);
    for (const auto& [flag, field] : given) fields[flag] = field;
    throw HttpError(400, as_fields(e.what(), fields));
  }
  if (f.search.beam > kMaxBeam || f.search.n_best > kMaxBeam)
    throw HttpError(400, "\"beam\" and \"n_best\" are at most " + std::to_string(kMaxBeam) + " on this server, got " +
                             std::to_string(std::max(f.search.beam, f.search.n_best)));
  parsed_flags().keep(std::move(args), f);
  return f;
}

// The sentences of body["text"] (or ["ids"]) as attn translate's input lines 1, 2, ...
void add_lines(TranslateWork& w, const nlohmann::json& body, const ServedModel& m, OnLong on_long,
               const RequestLimits& limits) {
  const Seq2SeqCommon c = m.seq2seq->common();
  const size_t positions = static_cast<size_t>(c.max_len);
  auto add = [&](std::string input, FittedSource fitted) {
    w.lines.push_back({static_cast<int64_t>(w.lines.size()) + 1, std::move(fitted.pieces), {}});
    w.inputs.push_back(std::move(input));
  };
  if (body.contains("ids")) {
    w.tokenized = false;
    for (auto& ids : ids_field(body, "ids", c.src_vocab, limits)) {
      const std::string where = "\"ids\"[" + std::to_string(w.lines.size()) + "]";
      if (std::all_of(ids.begin(), ids.end(), [&](int32_t id) { return id == c.pad_id; }))
        throw HttpError(400, where + " holds only the padding id: nothing to translate");
      const std::string input = format_ids(ids);
      add(input, fit_ids(std::move(ids), positions, on_long, where));
    }
    return;
  }
  if (!m.tokenizer) throw HttpError(400, "model '" + m.name + "' has no tokenizer: send token ids as \"ids\"");
  for (std::string& text : sentences_field(body, "text", limits)) {
    const std::string where = "\"text\"[" + std::to_string(w.lines.size()) + "]";
    FittedSource fitted = fit_text(*m.tokenizer, text, c.eos_id, positions, on_long, where);
    add(std::move(text), std::move(fitted));
  }
}

// "target_prefix": per sentence the start of its translation (CTranslate2's target_prefix, attn
// translate's --prefix lines): text (token ids for "ids"), or null / "" for none.
void add_prefixes(TranslateWork& w, const nlohmann::json& body, const ServedModel& m) {
  if (!body.contains("target_prefix")) return;
  const nlohmann::json& v = body["target_prefix"];
  if (!v.is_array() || v.size() != w.lines.size())
    throw HttpError(400, "\"target_prefix\" must be an array with one entry per sentence (" +
                             std::to_string(w.lines.size()) + "), got " + shown(v));
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "\"target_prefix\"[" + std::to_string(i) + "]";
    if (v[i].is_null()) continue;
    std::string text;
    if (w.tokenized && v[i].is_string()) text = v[i].get<std::string>();
    else if (!w.tokenized && v[i].is_array() && std::all_of(v[i].begin(), v[i].end(), [](const auto& x) { return x.is_number_integer(); }))
      for (const auto& id : v[i]) {
        if (!text.empty()) text += ' ';
        text += id.dump();
      }
    else throw HttpError(400, where + " must be " + (w.tokenized ? "a string" : "an array of token ids") + " or null, got " + shown(v[i]));
    if (text.find_first_of("\r\n") != std::string::npos) throw HttpError(400, where + " holds a line break");
    w.lines[i].prefix = cli::prefix_ids(text, where, w.lines[i], m.seq2seq->common(), w.tokenized ? &*m.tokenizer : nullptr);
  }
}

}  // namespace

TranslateWork translate_work(const nlohmann::json& body, const ServedModel& m, const RequestLimits& limits) {
  for (const auto& item : body.items()) {
    const std::string& key = item.key();  // a named variable: a lambda may not capture a structured binding (C++17)
    if (!kOtherFields.count(key) &&
        std::none_of(field_names().begin(), field_names().end(), [&](const auto& o) { return o.name == key; }))
      throw HttpError(400, "unknown field \"" + key + "\" (docs/serve.md lists the fields of /v1/translate)");
  }
  const cli::TranslateFlags f = parse_options(body, m);
  TranslateWork w;
  w.search = f.search;
  w.output = f.output;
  w.attention = bool_field(body, "attention", false);
  w.shortlist = bool_field(body, "use_vmap", m.shortlist.has_value());
  if (w.shortlist && !m.shortlist)
    throw HttpError(400, "model '" + m.name + "' has no shortlist (attn serve --shortlist " + m.name + "=FILE)");
  try {
    add_lines(w, body, m, parse_on_long(f.on_long, "on_long"), limits);
    add_prefixes(w, body, m);
  } catch (const Error& e) {
    throw HttpError(400, e.what());
  }
  const bool prefixed = std::any_of(w.lines.begin(), w.lines.end(), [](const cli::Line& l) { return !l.prefix.empty(); });
  if (w.attention && (prefixed || w.search.sampling.on || w.shortlist))
    throw HttpError(400, "\"attention\" searches the sentence again without target_prefix, sampling or use_vmap: "
                         "it cannot be asked with them");
  for (const cli::Line& line : w.lines)
    if (w.attention && line.pieces.size() > 1)
      throw HttpError(400, "\"attention\" needs sentences within the model's positions (one is longer)");
  return w;
}

std::string translate_key(const TranslateWork& w) {
  const SearchOptions& o = w.search;
  const SamplingOptions& s = o.sampling;
  char key[512];
  std::snprintf(key, sizeof key,
                "translate beam=%d n_best=%d alpha=%.17g max_len=%d a=%.17g b=%d min_len=%d no_repeat=%d rep=%.17g "
                "cache=%d sampling=%d k=%d p=%.17g T=%.17g seed=%llu shortlist=%d",
                o.beam, o.n_best, o.length_penalty, o.max_len, o.max_len_a, o.max_len_b, o.min_len, o.no_repeat_ngram,
                o.repetition_penalty, o.use_cache ? 1 : 0, s.on ? 1 : 0, s.top_k, s.top_p, s.temperature,
                static_cast<unsigned long long>(s.seed), w.shortlist ? 1 : 0);
  return key;
}

}  // namespace attn::serve
