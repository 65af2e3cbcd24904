// YAML (the block and flow styles a config file uses) read into JSON values, through libyaml.
// Scalars become numbers, booleans or null when they read as such in YAML 1.1's core forms
// (123, 1.5e-3, true/false/yes/no, null/~) unless quoted; everything else is a string.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attn::io {

// `source` names the file for messages (errors carry its line and column).
nlohmann::json parse_yaml(const std::string& text, const std::string& source);

}  // namespace attn::io
