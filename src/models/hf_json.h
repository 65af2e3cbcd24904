// Private to src/models: reading a Hugging Face JSON file's keys (config.json,
// generation_config.json, tokenizer_config.json) as transformers does, absent and null alike.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "attn/error.h"

namespace attn::detail {

// j[key] as T, or `fallback` when absent or null; a value of another type is an error naming
// `source`, the key and `what` ("a MarianConfig": whose type the key has).
template <class T>
T hf_value(const nlohmann::json& j, const char* key, T fallback, const std::string& source, const char* what) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  try {
    return j[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    fail(source, ": \"", key, "\" is ", j[key].dump().substr(0, 80), ", not the type ", what, " has there");
  }
}

}  // namespace attn::detail
