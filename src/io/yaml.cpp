#include "attn/io/yaml.h"

#include <yaml.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>

#include "attn/error.h"
#include "attn/io/json.h"

namespace attn::io {
namespace {

// The number forms of YAML's core schema, read in one pass: [-+]?[0-9]+ (an integer) and
// [-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)? (a real). A scan, not std::regex: libstdc++'s
// matcher recurses once a character, so a long scalar overflowed the stack.
enum class Number { none, integer, real };

Number number_form(const std::string& s) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const size_t whole = digits();
  if (whole > 0 && i == s.size()) return Number::integer;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0 && whole == 0) return Number::none;
  } else if (whole == 0) {
    return Number::none;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return Number::none;
  }
  return i == s.size() ? Number::real : Number::none;
}

nlohmann::json scalar_value(const yaml_event_t& e) {
  std::string s(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
  if (e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return s;
  const Number form = number_form(s);
  if (form == Number::integer) {  // beyond 64 bits: kept as text, which no number key accepts
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    return errno == ERANGE ? nlohmann::json(s) : nlohmann::json(v);
  }
  if (form == Number::real) return std::strtod(s.c_str(), nullptr);
  // YAML 1.2's core schema: only true/false are booleans, so a file or directory called "on" or
  // "no" stays text (keys that take true/false also take yes/no/on/off, src/train/config_file.cpp).
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  return s;
}

// One libyaml event, deleted when it goes out of scope (also when an error is thrown).
struct Event {
  yaml_event_t e{};
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { yaml_event_delete(&e); }
  size_t line() const { return e.start_mark.line + 1; }
};

struct Parser {
  yaml_parser_t p;
  std::string source;

  std::unique_ptr<Event> next() {
    auto ev = std::make_unique<Event>();
    if (!yaml_parser_parse(&p, &ev->e))
      fail(source, ":", p.problem_mark.line + 1, ":", p.problem_mark.column + 1, ": YAML error: ",
           p.problem ? p.problem : "unknown");
    return ev;
  }

  // Parses the node that starts with `ev`; `depth` collections enclose it. The recursion is
  // bounded: a file nested deeper than kMaxNesting is refused.
  nlohmann::json node(const Event& ev, int depth = 0) {
    const yaml_event_t& e = ev.e;
    if (e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT)
      check(depth < kMaxNesting, source, ":", ev.line(), ": nested more than ", kMaxNesting,
            " levels deep (attn reads at most ", kMaxNesting, ")");
    switch (e.type) {
      case YAML_SCALAR_EVENT: return scalar_value(e);
      case YAML_SEQUENCE_START_EVENT: {
        nlohmann::json out = nlohmann::json::array();
        for (auto c = next(); c->e.type != YAML_SEQUENCE_END_EVENT; c = next()) out.push_back(node(*c, depth + 1));
        return out;
      }
      case YAML_MAPPING_START_EVENT: {
        nlohmann::json out = nlohmann::json::object();
        for (auto k = next(); k->e.type != YAML_MAPPING_END_EVENT; k = next()) {
          check(k->e.type == YAML_SCALAR_EVENT, source, ":", k->line(), ": mapping keys must be plain names");
          std::string key(reinterpret_cast<const char*>(k->e.data.scalar.value), k->e.data.scalar.length);
          check(!out.contains(key), source, ":", k->line(), ": key '", key, "' appears twice");
          out[key] = node(*next(), depth + 1);
        }
        return out;
      }
      case YAML_ALIAS_EVENT: fail(source, ":", ev.line(), ": YAML aliases are not supported");
      default: fail(source, ": unexpected YAML structure");
    }
  }
};

}  // namespace

nlohmann::json parse_yaml(const std::string& text, const std::string& source) {
  Parser ps;
  ps.source = source;
  check(yaml_parser_initialize(&ps.p) != 0, "yaml: cannot initialise the parser");
  std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t*)> guard(&ps.p, yaml_parser_delete);
  yaml_parser_set_input_string(&ps.p, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  nlohmann::json doc = nlohmann::json::object();
  for (auto e = ps.next(); e->e.type != YAML_STREAM_END_EVENT; e = ps.next()) {
    if (e->e.type != YAML_DOCUMENT_START_EVENT) continue;
    auto body = ps.next();
    if (body->e.type != YAML_DOCUMENT_END_EVENT) doc = ps.node(*body);
  }
  return doc;
}

}  // namespace attn::io
