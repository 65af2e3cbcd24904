// Config files for `attn train`: YAML or JSON (JSON is YAML), overridden by --set key=value on
// the command line, checked against a documented schema. Keys are dotted paths
// ("train.warmup" is `warmup:` inside `train:`); an unknown or mistyped key is an error that
// names it and the file.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::cli {

struct ConfigKey {
  std::string key;          // dotted path
  nlohmann::json fallback;  // default value; its type is the key's type (null: a string, may be unset)
  std::string help;
};

class Config {
 public:
  // path may be empty (defaults and --set only).
  static Config load(const std::string& path, const std::vector<std::string>& sets,
                     const std::vector<ConfigKey>& schema);

  bool is_set(const std::string& key) const;  // not null
  int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  bool flag(const std::string& key) const;
  std::string str(const std::string& key) const;
  const nlohmann::json& value(const std::string& key) const;
  // Every key with its value, nested (for saving beside a model).
  nlohmann::json nested() const;

 private:
  std::vector<ConfigKey> schema_;
  nlohmann::json flat_ = nlohmann::json::object();
};

// The schema as text, for --help-config.
std::string describe(const std::vector<ConfigKey>& schema);

}  // namespace attn::cli
