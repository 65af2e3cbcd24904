#include "translate_request.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "attn/decode/id_lines.h"
#include "attn/decode/long_lines.h"
#include "attn/error.h"

namespace attn::serve {
namespace {

constexpr int kMaxBeam = 64;  // the server's own bound on beam and n_best: the memory of one request

// The fields of a translate body besides the options of the library's table; any other is a 400
// (a misspelt option would otherwise be ignored without a word).
const std::set<std::string> kOtherFields = {"model", "text", "ids", "target_prefix", "attention"};

// How the body names an option in messages: the field it gave it as, else the API's short name,
// else CTranslate2's.
struct FieldNames {
  std::map<std::string, std::string> given;  // key -> field
  std::string operator()(const OptionField& f) const {
    const auto it = given.find(f.key);
    return "\"" + (it != given.end() ? it->second : f.short_name.empty() ? f.key : f.short_name) + "\"";
  }
};

// Sets option f from the body's value v, after checking its JSON type (the library checks its range).
void set_field(TranslateOptionsBuilder& b, const OptionField& f, const std::string& field, const nlohmann::json& v) {
  const std::string name = "\"" + field + "\"";
  switch (f.type) {
    case OptionType::whole:
      if (!v.is_number_integer()) throw HttpError(400, name + " must be a whole number, got " + shown(v));
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return b.set_real(f, v.get<double>(), v.dump());
      return b.set_whole(f, v.get<int64_t>(), v.dump());
    case OptionType::real: {
      if (!v.is_number()) throw HttpError(400, name + " must be a number, got " + shown(v));
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", v.get<double>());
      return b.set_real(f, v.get<double>(), text);
    }
    case OptionType::flag:
      if (!v.is_boolean()) throw HttpError(400, name + " must be true or false, got " + shown(v));
      return b.set_flag(f, v.get<bool>());
    case OptionType::choice:
      if (f.key == "alignment") {  // true (hard), false (none), "hard" or "soft"
        if (!v.is_boolean() && !v.is_string())
          throw HttpError(400, name + " must be true, false, \"hard\" or \"soft\", got " + shown(v));
        if (v.is_string()) b.set(f, v.get<std::string>());
        else if (v.get<bool>()) b.set(f, "hard");
        return;
      }
      if (!v.is_string()) throw HttpError(400, name + " must be a string, got " + shown(v));
      return b.set(f, v.get<std::string>());
  }
}

// The body's options, checked by the library's rules against model m.
TranslateOptions parse_options(const nlohmann::json& body, const ServedModel& m) {
  FieldNames names;
  std::vector<std::pair<const OptionField*, std::string>> fields;  // in the body's order
  for (const auto& item : body.items()) {
    const std::string& key = item.key();
    if (kOtherFields.count(key)) continue;
    const OptionField* f = find_translate_option(key, kJson);
    if (f == nullptr) throw HttpError(400, "unknown field \"" + key + "\" (docs/serve.md lists the fields of /v1/translate)");
    if (const auto [it, fresh] = names.given.emplace(f->key, key); !fresh) {
      // in the table's order of names, as a reader of the message looks them up
      std::string first = it->second, second = key;
      if (first == f->key || (first != f->short_name && second == f->short_name)) std::swap(first, second);
      throw HttpError(400, "\"" + first + "\" and \"" + second + "\" are the same option: give one");
    }
    fields.emplace_back(f, key);
  }
  TranslateOptionsBuilder b(names);
  TranslateOptions o;
  try {
    for (const auto& [f, key] : fields) set_field(b, *f, key, body[key]);
    b.defaults_from(m.translator->defaults());
    o = b.finish();
    if (body.contains("ids")) check_for_ids(o, names, "\"ids\"");
    m.translator->check_options(o, names);
  } catch (const Error& e) {
    throw HttpError(400, e.what());
  }
  if (o.search.beam > kMaxBeam || o.search.n_best > kMaxBeam)
    throw HttpError(400, "\"beam\" and \"n_best\" are at most " + std::to_string(kMaxBeam) + " on this server, got " +
                             std::to_string(std::max(o.search.beam, o.search.n_best)));
  return o;
}

// The sentences of body["text"] (or ["ids"]) as the translator's lines 1, 2, ...
void add_lines(TranslateWork& w, const nlohmann::json& body, const ServedModel& m, const RequestLimits& limits) {
  const Translator& t = *m.translator;
  const Seq2SeqCommon c = t.config();
  auto add = [&](std::string input, SourceLine line) {
    w.lines.push_back(std::move(line));
    w.inputs.push_back(std::move(input));
  };
  const int64_t first = 1;
  if (body.contains("ids")) {
    w.tokenized = false;
    for (auto& ids : ids_field(body, "ids", c.src_vocab, limits)) {
      const std::string where = "\"ids\"[" + std::to_string(w.lines.size()) + "]";
      if (std::all_of(ids.begin(), ids.end(), [&](int32_t id) { return id == c.pad_id; }))
        throw HttpError(400, where + " holds only the padding id: nothing to translate");
      std::string input = format_ids(ids);
      add(std::move(input), t.ids_line(std::move(ids), first + static_cast<int64_t>(w.lines.size()), where, w.options.on_long));
    }
    return;
  }
  if (!t.tokenizers()) throw HttpError(400, "model '" + m.name + "' has no tokenizer: send token ids as \"ids\"");
  for (std::string& text : sentences_field(body, "text", limits)) {
    const std::string where = "\"text\"[" + std::to_string(w.lines.size()) + "]";
    SourceLine line = t.text_line(text, first + static_cast<int64_t>(w.lines.size()), where, w.options.on_long);
    add(std::move(text), std::move(line));
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
  const Translator& t = *m.translator;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "\"target_prefix\"[" + std::to_string(i) + "]";
    if (v[i].is_null()) continue;
    if (w.tokenized && v[i].is_string()) {
      const std::string text = v[i].get<std::string>();
      if (text.find_first_of("\r\n") != std::string::npos) throw HttpError(400, where + " holds a line break");
      w.lines[i].prefix = t.text_prefix(text, where, w.lines[i]);
    } else if (!w.tokenized && v[i].is_array() &&
               std::all_of(v[i].begin(), v[i].end(), [](const auto& x) { return x.is_number_integer(); })) {
      std::vector<int32_t> ids;
      for (const auto& id : v[i]) {
        const int64_t x = id.is_number_unsigned() && id.get<uint64_t>() > INT32_MAX ? INT64_MAX : id.get<int64_t>();
        check(x >= 0 && x < t.config().tgt_vocab, where, ": token id ", id.dump(), " out of range for vocabulary ",
              t.config().tgt_vocab);
        ids.push_back(static_cast<int32_t>(x));
      }
      w.lines[i].prefix = t.ids_prefix(std::move(ids), where, w.lines[i]);
    } else {
      throw HttpError(400, where + " must be " + (w.tokenized ? "a string" : "an array of token ids") +
                               " or null, got " + shown(v[i]));
    }
  }
}

}  // namespace

TranslateWork translate_work(const nlohmann::json& body, const ServedModel& m, const RequestLimits& limits) {
  TranslateWork w;
  w.options = parse_options(body, m);
  w.attention = bool_field(body, "attention", false);
  if (!body.contains("use_vmap")) w.options.use_shortlist = m.translator->shortlist() != nullptr;
  if (w.options.use_shortlist && !m.translator->shortlist())
    throw HttpError(400, "model '" + m.name + "' has no shortlist (attn serve --shortlist " + m.name + "=FILE)");
  try {
    add_lines(w, body, m, limits);
    add_prefixes(w, body, m);
  } catch (const Error& e) {
    throw HttpError(400, e.what());
  }
  const bool prefixed = std::any_of(w.lines.begin(), w.lines.end(), [](const SourceLine& l) { return !l.prefix.empty(); });
  if (w.attention && (prefixed || w.options.search.sampling.on || w.options.use_shortlist))
    throw HttpError(400, "\"attention\" searches the sentence again without target_prefix, sampling or use_vmap: "
                         "it cannot be asked with them");
  for (const SourceLine& line : w.lines)
    if (w.attention && line.pieces.size() > 1)
      throw HttpError(400, "\"attention\" needs sentences within the model's positions (one is longer)");
  return w;
}

std::string translate_key(const TranslateWork& w) {
  const SearchOptions& o = w.options.search;
  const SamplingOptions& s = o.sampling;
  char key[512];
  std::snprintf(key, sizeof key,
                "translate beam=%d n_best=%d alpha=%.17g max_len=%d a=%.17g b=%d min_len=%d no_repeat=%d rep=%.17g "
                "cache=%d sampling=%d k=%d p=%.17g T=%.17g seed=%llu shortlist=%d rules=%d eos_at_max=%d",
                o.beam, o.n_best, o.length_penalty, o.max_len, o.max_len_a, o.max_len_b, o.min_len, o.no_repeat_ngram,
                o.repetition_penalty, o.use_cache ? 1 : 0, s.on ? 1 : 0, s.top_k, s.top_p, s.temperature,
                static_cast<unsigned long long>(s.seed), w.options.use_shortlist ? 1 : 0, static_cast<int>(o.rules),
                o.eos_at_max_len ? 1 : 0);
  return key;
}

}  // namespace attn::serve
