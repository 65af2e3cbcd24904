#include "config_fields.h"

#include <unistd.h>

#include "attn/error.h"

namespace attn::config_fields {

const std::set<std::string>& not_the_networks() {
  static const std::set<std::string> keys = {"model",     "task",            "tokenizer",    "training",
                                             "precision", "int8_weight_max", "imported_from", "suppress_ids",
                                             "translate_defaults", "languages"};
  return keys;
}

void read_fields(const nlohmann::json& j, const std::vector<BoundKey>& keys, const std::set<std::string>& skipped,
                 const std::string& source, const std::string& family) {
  check(j.is_object(), source, ": the configuration must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (skipped.count(it.key())) continue;
    const BoundKey* k = find_key(keys, it.key());
    check(k != nullptr, source, ": unknown key '", it.key(), "' for ", family);
    set_field(*k, it.value(), source);
  }
}

void check_family(const nlohmann::json& j, ModelKind kind, const std::string& source, const char* load_it_as) {
  if (!j.is_object() || !j.contains("model")) return;
  const nlohmann::json& v = j["model"];
  check(v.is_string(), source, ": key 'model' must be a string, got ", v.dump());
  ModelKind named;
  parse(v.get<std::string>(), &named, source + ": model");
  check(named == kind, source, ": model is '", name(named), "', not ", load_it_as);
}

void check_fits_in_memory(double parameters, const char* family) {
  const double bytes = parameters * sizeof(float);
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  check(memory <= 0 || bytes <= memory, "config: this ", family, " has ", parameters / 1e6,
        "M parameters (", bytes / (1 << 30), " GiB in fp32), more than this machine's memory (",
        memory / (1 << 30), " GiB)");
}

}  // namespace attn::config_fields
