// Reading a request's JSON body: every field checked for its type and range, every mistake an
// HttpError the client gets back as {"error": "..."} with a status it can act on (400: the
// request is wrong; 413: it is too large; 404: no such model; 503: full, retry later).
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/option_table.h"

namespace attn::serve {

struct HttpError : std::runtime_error {
  HttpError(int status, const std::string& message) : std::runtime_error(message), status(status) {}
  int status;
};

// Limits on what one request may ask (413 past them).
struct RequestLimits {
  size_t max_body_bytes = 1 << 20;  // the body, checked by the HTTP layer
  size_t max_sentences = 64;        // sentences (texts, id rows, pairs) per request
  size_t max_line_bytes = 4096;     // bytes of one sentence
  size_t max_answer_bytes = 32u << 20;  // the answer's text, bounded before it is computed (answer_size.h)
};

// A value as an error message shows it: its JSON, cut to 60 characters (io::quoted_json: without
// recursion, whatever its depth).
std::string shown(const nlohmann::json& v);

// The body as a JSON object (400 naming the parse error otherwise; invalid UTF-8 is one; so is
// nesting deeper than io::kMaxNesting, which would reach code that recurses once per level: a
// copy, a dump).
nlohmann::json parse_body(const std::string& body);

// body[key] as a whole number in [min, max], `fallback` when absent.
int64_t int_field(const nlohmann::json& body, const std::string& key, int64_t fallback, int64_t min, int64_t max);
double real_field(const nlohmann::json& body, const std::string& key, double fallback, double min, double max);
bool bool_field(const nlohmann::json& body, const std::string& key, bool fallback);
// A string field; `required` and absent is a 400.
std::string string_field(const nlohmann::json& body, const std::string& key, const std::string& fallback,
                         bool required = false);

// body[key]: a string or an array of strings, each one sentence: non-blank, no line break, at
// most max_line_bytes; between 1 and max_sentences of them.
std::vector<std::string> sentences_field(const nlohmann::json& body, const std::string& key,
                                         const RequestLimits& limits);
// body[key]: an array of arrays of token ids, each in [0, vocab), each row non-empty.
std::vector<std::vector<int32_t>> ids_field(const nlohmann::json& body, const std::string& key, int64_t vocab,
                                            const RequestLimits& limits);

// The options a body's fields set from a table of whole-number options (option_table.h; a field
// is an option's key), each value checked for its JSON type here and then by the library as it is
// set, so a value the command line refuses is refused with the same message, the option named as
// the body's field. A field neither in the table nor in `other` is a 400 naming `route`'s fields
// in docs/serve.md (a misspelt option would otherwise be ignored without a word).
template <class Options>
Options table_options(const nlohmann::json& body, const std::vector<WholeOption<Options>>& fields,
                      const std::set<std::string>& other, const std::string& route) {
  WholeOptionsBuilder<Options> b([](const WholeOption<Options>& f) { return "\"" + f.key + "\""; });
  for (const auto& item : body.items()) {
    const std::string& key = item.key();
    if (other.count(key)) continue;
    const WholeOption<Options>* f = find_whole_option(fields, key, kJson);
    if (f == nullptr) throw HttpError(400, "unknown field \"" + key + "\" (docs/serve.md lists the fields of " + route + ")");
    const nlohmann::json& v = item.value();
    if (!v.is_number_integer()) throw HttpError(400, "\"" + key + "\" must be a whole number, got " + shown(v));
    try {
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        b.set(*f, v.dump());  // beyond int64: the range check names it as written
      else
        b.set_whole(*f, v.get<int64_t>(), v.dump());
    } catch (const Error& e) {
      throw HttpError(400, e.what());
    }
  }
  return b.options();
}

}  // namespace attn::serve
