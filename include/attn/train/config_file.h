// Config files for `attn train`: YAML or JSON (JSON is YAML), overridden by --set key=value on
// the command line. Keys are dotted paths ("train.warmup" is `warmup:` inside `train:`).
//
// Each key is declared once, as a ConfigKey in a table (models/config_keys.h; attn train's tables
// are in train/run_config.cpp, their model.* keys the model configs' own).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/config_keys.h"

namespace attn {

// An override on the command line: "key=value", and the flag it came from (--set, or a shortcut
// such as --max-steps), which its errors name.
struct Override {
  Override(std::string key_value, std::string flag = "--set") : key_value(std::move(key_value)), flag(std::move(flag)) {}
  Override(const char* key_value) : key_value(key_value) {}
  std::string key_value;
  std::string flag = "--set";
};

// Sets the fields from the config file at `path` (may be empty), then from the overrides, in
// that order. Keys in `skipped` are accepted and left alone (the task, chosen
// before the table). Returns the keys given.
std::set<std::string> load_config(const std::string& path, const std::vector<Override>& sets,
                                  const std::vector<BoundKey>& keys, const std::set<std::string>& skipped);

}  // namespace attn
