// Config files for `attn train`: YAML or JSON (JSON is YAML), overridden by --set key=value on
// the command line. Keys are dotted paths ("train.warmup" is `warmup:` inside `train:`).
//
// Each key is declared once, as a ConfigKey in a table (train_config.cpp): its name, the field of
// the settings struct it sets, its range or accepted words, and its help. A key has no default of
// its own: its default is the field's default initialiser, so the table, --help-config and the
// struct cannot disagree. Values are checked against the field's type and the key's range; every
// error names the key and where the value came from.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/classifier.h"
#include "attn/models/transformer_config.h"
#include "attn/nn/rnn_cell.h"
#include "attn/train/progress.h"

namespace attn {

// The field a key sets.
// Enumerated fields (ModelKind, ...) are parsed from their names and printed by name (name(),
// parse() beside each enum).
using Field = std::variant<int*, int64_t*, uint64_t*, float*, double*, bool*, std::string*, BudgetClock*, ModelKind*,
                           ScoreKind*, Positions*, Activation*, RnnCell*, Pooling*, HeadSplit*>;

// The values a number may take: [min, max], either end open when min_open / max_open. Integers are
// also bounded by their field's type.
struct Bounds {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false, max_open = false;
};
inline Bounds at_least(double min) { return {.min = min}; }
inline Bounds above(double min) { return {.min = min, .min_open = true}; }
inline Bounds between(double min, double max) { return {.min = min, .max = max}; }
inline Bounds fraction_below_one() { return {.min = 0, .max = 1, .max_open = true}; }  // [0, 1)

// What the table says of a key, apart from its field.
struct KeyRule {
  KeyRule(std::string key, std::string help, Bounds bounds = {}, std::vector<std::string> words = {})
      : key(std::move(key)), help(std::move(help)), bounds(bounds), words(std::move(words)) {}
  std::string key;
  std::string help;
  Bounds bounds;                   // numbers
  std::vector<std::string> words;  // strings: the accepted values (empty: any string)
};

// A key of the settings struct S: `field` returns the member of an S it sets.
template <class S>
struct ConfigKey {
  KeyRule rule;
  Field (*field)(S&);
};

// A key bound to one settings object.
struct BoundKey {
  const KeyRule* rule;
  Field field;
};

template <class S>
std::vector<BoundKey> bind(const std::vector<ConfigKey<S>>& table, S& settings) {
  std::vector<BoundKey> out;
  for (const ConfigKey<S>& k : table) out.push_back({&k.rule, k.field(settings)});
  return out;
}

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

// Sets one field from a parsed value, or throws attn::Error naming `where` and the key.
void set_field(const BoundKey& k, const nlohmann::json& value, const std::string& where);

// A field's value as JSON (an empty string is null: unset).
nlohmann::json field_value(const Field& f);

// The bounds or words of a key as text ("[0, 1)", "one of: noam, constant"); empty when none.
std::string describe_rule(const KeyRule& rule, const Field& f);

// Every key with its value (the defaults, for a default-constructed struct), its help and its
// range, for --help-config.
std::string describe(const std::vector<BoundKey>& keys);

}  // namespace attn
