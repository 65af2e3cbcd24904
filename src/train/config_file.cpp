#include "attn/train/config_file.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/yaml.h"

namespace attn {
namespace {

void flatten(const nlohmann::json& j, const std::string& prefix, nlohmann::json& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object()) flatten(it.value(), key, out);
    else out[key] = it.value();
  }
}

}  // namespace

std::set<std::string> load_config(const std::string& path, const std::vector<Override>& sets,
                                  const std::vector<BoundKey>& keys, const std::set<std::string>& skipped) {
  std::set<std::string> given;
  if (!path.empty()) {
    check(std::filesystem::exists(path), path, ": no such config file");
    nlohmann::json doc = io::parse_yaml(io::read_file(path), path);
    check(doc.is_object(), path, ": the config must be a mapping of keys to values");
    nlohmann::json flat = nlohmann::json::object();
    flatten(doc, "", flat);
    for (auto it = flat.begin(); it != flat.end(); ++it) {
      if (skipped.count(it.key())) continue;
      const BoundKey* k = find_key(keys, it.key());
      check(k != nullptr, path, ": unknown key '", it.key(), "' (attn train --help-config lists them)");
      set_field(*k, it.value(), path);
      given.insert(it.key());
    }
  }
  for (const Override& o : sets) {
    const std::string& s = o.key_value;
    auto eq = s.find('=');
    check(eq != std::string::npos && eq > 0, o.flag, " needs key=value, got '", s, "'");
    std::string key = s.substr(0, eq), text = s.substr(eq + 1);
    if (skipped.count(key)) continue;
    const BoundKey* k = find_key(keys, key);
    check(k != nullptr, o.flag, ": unknown key '", key, "' (attn train --help-config lists them)");
    nlohmann::json v;
    try {
      v = io::parse_yaml("v: " + text, o.flag + " " + key)["v"];
    } catch (const std::out_of_range&) {  // a whole number past 64 bits
      fail(o.flag, ": key '", key, "' must be ", describe_rule(*k->rule, k->field), ", got ", text);
    }
    set_field(*k, v, o.flag);
    given.insert(key);
  }
  return given;
}

}  // namespace attn
