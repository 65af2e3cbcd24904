#include "attn/io/yaml.h"

#include <yaml.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <regex>

#include "attn/error.h"

namespace attn::io {
namespace {

nlohmann::json scalar_value(const yaml_event_t& e) {
  std::string s(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
  if (e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return s;
  static const std::regex integer("[-+]?[0-9]+"), real("[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");
  if (std::regex_match(s, integer)) {  // beyond 64 bits: kept as text, which no number key accepts
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    return errno == ERANGE ? nlohmann::json(s) : nlohmann::json(v);
  }
  if (std::regex_match(s, real)) return std::strtod(s.c_str(), nullptr);
  if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  return s;
}

struct Parser {
  yaml_parser_t p;
  std::string source;

  yaml_event_t next() {
    yaml_event_t e;
    if (!yaml_parser_parse(&p, &e))
      fail(source, ":", p.problem_mark.line + 1, ":", p.problem_mark.column + 1, ": YAML error: ",
           p.problem ? p.problem : "unknown");
    return e;
  }

  // Parses the node that starts with event `e` (which it deletes).
  nlohmann::json node(yaml_event_t e) {
    nlohmann::json out;
    switch (e.type) {
      case YAML_SCALAR_EVENT: out = scalar_value(e); break;
      case YAML_SEQUENCE_START_EVENT: {
        out = nlohmann::json::array();
        for (yaml_event_t c = next(); c.type != YAML_SEQUENCE_END_EVENT; c = next()) out.push_back(node(c));
        break;
      }
      case YAML_MAPPING_START_EVENT: {
        out = nlohmann::json::object();
        for (yaml_event_t k = next(); k.type != YAML_MAPPING_END_EVENT; k = next()) {
          size_t line = k.start_mark.line + 1;
          check(k.type == YAML_SCALAR_EVENT, source, ":", line, ": mapping keys must be plain names");
          std::string key(reinterpret_cast<const char*>(k.data.scalar.value), k.data.scalar.length);
          yaml_event_delete(&k);
          check(!out.contains(key), source, ":", line, ": key '", key, "' appears twice");
          out[key] = node(next());
        }
        break;
      }
      case YAML_ALIAS_EVENT: fail(source, ":", e.start_mark.line + 1, ": YAML aliases are not supported");
      default: fail(source, ": unexpected YAML structure");
    }
    yaml_event_delete(&e);
    return out;
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
  for (yaml_event_t e = ps.next(); e.type != YAML_STREAM_END_EVENT; e = ps.next()) {
    if (e.type == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&e);
      yaml_event_t body = ps.next();
      if (body.type == YAML_DOCUMENT_END_EVENT) {
        yaml_event_delete(&body);
        continue;
      }
      doc = ps.node(body);
      continue;
    }
    yaml_event_delete(&e);
  }
  return doc;
}

}  // namespace attn::io
