// JSON text read with a bound on nesting. attn's own JSON (config.json, state.json, a safetensors
// header) nests a few levels; a hostile file nested 100,000 deep would otherwise reach code that
// recurses once per level (printing a value, walking a config) and end the process on a stack
// overflow. The YAML reader (io/yaml.h) keeps the same bound.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace attn::io {

constexpr int kMaxNesting = 64;  // arrays and objects inside one another

// Parses `text`; a syntax error or nesting deeper than kMaxNesting throws attn::Error naming
// `source` (a file path) and, for nesting, the limit.
nlohmann::json parse_json(std::string_view text, const std::string& source);

// `v` as an error message quotes it: its compact JSON text cut to at most `max_chars` bytes (at a
// UTF-8 boundary) and "..." when cut; invalid UTF-8 in a string shown as U+FFFD. Written with a
// stack of its own that stops at the bound, so a value of any depth or size costs about max_chars
// of work: nlohmann's dump() recurses once per level and serialises the whole value first.
std::string quoted_json(const nlohmann::json& v, size_t max_chars = 60);

}  // namespace attn::io
