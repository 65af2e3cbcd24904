#include "config.h"

#include <filesystem>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/yaml.h"

namespace attn::cli {
namespace {

void flatten(const nlohmann::json& j, const std::string& prefix, nlohmann::json& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object()) flatten(it.value(), key, out);
    else out[key] = it.value();
  }
}

const ConfigKey* find(const std::vector<ConfigKey>& schema, const std::string& key) {
  for (const auto& k : schema)
    if (k.key == key) return &k;
  return nullptr;
}

// The value, converted to the key's type, or an error naming the key and where it came from.
nlohmann::json typed(const ConfigKey& k, const nlohmann::json& v, const std::string& where) {
  const auto& f = k.fallback;
  if (v.is_null()) return v;
  if (f.is_boolean()) {
    check(v.is_boolean(), where, ": key '", k.key, "' must be true or false, got ", v.dump());
  } else if (f.is_number_integer()) {
    check(v.is_number_integer(), where, ": key '", k.key, "' must be a whole number, got ", v.dump());
  } else if (f.is_number()) {
    check(v.is_number(), where, ": key '", k.key, "' must be a number, got ", v.dump());
    return v.get<double>();
  } else if (f.is_string() || f.is_null()) {
    if (v.is_number() || v.is_boolean()) return v.dump();  // a file name like 2024 stays a string
    check(v.is_string(), where, ": key '", k.key, "' must be a string, got ", v.dump());
  }
  return v;
}

}  // namespace

Config Config::load(const std::string& path, const std::vector<std::string>& sets,
                    const std::vector<ConfigKey>& schema) {
  Config c;
  c.schema_ = schema;
  for (const auto& k : schema) c.flat_[k.key] = k.fallback;
  if (!path.empty()) {
    check(std::filesystem::exists(path), path, ": no such config file");
    nlohmann::json doc = io::parse_yaml(io::read_file(path), path);
    check(doc.is_object(), path, ": the config must be a mapping of keys to values");
    nlohmann::json flat = nlohmann::json::object();
    flatten(doc, "", flat);
    for (auto it = flat.begin(); it != flat.end(); ++it) {
      const ConfigKey* k = find(schema, it.key());
      check(k != nullptr, path, ": unknown key '", it.key(), "' (attn train --help-config lists them)");
      c.flat_[it.key()] = typed(*k, it.value(), path);
    }
  }
  for (const std::string& s : sets) {
    auto eq = s.find('=');
    check(eq != std::string::npos && eq > 0, "--set needs key=value, got '", s, "'");
    std::string key = s.substr(0, eq);
    const ConfigKey* k = find(schema, key);
    check(k != nullptr, "--set: unknown key '", key, "' (attn train --help-config lists them)");
    nlohmann::json v = io::parse_yaml("v: " + s.substr(eq + 1), "--set " + key)["v"];
    c.flat_[key] = typed(*k, v, "--set");
  }
  return c;
}

bool Config::is_set(const std::string& key) const { return !value(key).is_null(); }

const nlohmann::json& Config::value(const std::string& key) const {
  check(flat_.contains(key), "internal: config key '", key, "' is not in the schema");
  return flat_.at(key);
}

int64_t Config::integer(const std::string& key) const { return value(key).get<int64_t>(); }
double Config::real(const std::string& key) const { return value(key).get<double>(); }
bool Config::flag(const std::string& key) const { return value(key).get<bool>(); }
std::string Config::str(const std::string& key) const {
  const auto& v = value(key);
  return v.is_null() ? std::string() : v.get<std::string>();
}

nlohmann::json Config::nested() const {
  nlohmann::json out = nlohmann::json::object();
  for (auto it = flat_.begin(); it != flat_.end(); ++it) out[nlohmann::json::json_pointer("/" + [&] {
    std::string p = it.key();
    for (auto& ch : p) if (ch == '.') ch = '/';
    return p;
  }())] = it.value();
  return out;
}

std::string describe(const std::vector<ConfigKey>& schema) {
  std::string out;
  for (const auto& k : schema) {
    std::string left = "  " + k.key + ": " + (k.fallback.is_null() ? "(unset)" : k.fallback.dump());
    if (left.size() < 44) left.resize(44, ' ');
    else left += "\n" + std::string(44, ' ');
    out += left + k.help + "\n";
  }
  return out;
}

}  // namespace attn::cli
