// Settings declared once, as a table of keys per settings struct: each key names the member it
// sets, its range or accepted words, and its help. A key has no default of its own: its default is
// the member's initialiser, so a table, what it prints and the struct cannot disagree. The same
// table reads and writes the struct (config.json of a model, `attn train`'s YAML and --set), checks
// a value set in code, and describes the keys (--help-config). Values are checked against the
// member's type and the key's range; every error names the key and where the value came from.
//
// The model configs' tables are in models/ (transformer_config_keys(), rnn_config_keys(),
// classifier_config_keys()); `attn train`'s run tables (train/run_config.h) take their model.* keys
// from them.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/budget_clock.h"
#include "attn/models/classifier.h"
#include "attn/models/transformer_config.h"
#include "attn/models/rnn_config.h"
#include "attn/nn/rnn_cell.h"

namespace attn {

// The member a key sets. Enumerated members (ModelKind, ...) are parsed from their names and
// printed by name (name() and parse() beside each enum).
using Field = std::variant<int*, int64_t*, uint64_t*, float*, double*, bool*, std::string*, BudgetClock*, ModelKind*,
                           ScoreKind*, Positions*, Activation*, RnnCell*, Pooling*, HeadSplit*>;

// The values a number may take: [min, max], either end open when min_open / max_open. Integers are
// also bounded by their member's type.
struct Bounds {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false, max_open = false;
};
inline Bounds at_least(double min) { return {.min = min}; }
inline Bounds above(double min) { return {.min = min, .min_open = true}; }
inline Bounds between(double min, double max) { return {.min = min, .max = max}; }
inline Bounds fraction_below_one() { return {.min = 0, .max = 1, .max_open = true}; }  // [0, 1)

// What the table says of a key, apart from its member.
struct KeyRule {
  KeyRule(std::string key, std::string help, Bounds bounds = {}, std::vector<std::string> words = {})
      : key(std::move(key)), help(std::move(help)), bounds(bounds), words(std::move(words)) {}
  std::string key;
  std::string help;
  Bounds bounds;                   // numbers
  std::vector<std::string> words;  // strings and enums: the accepted values (empty: any string)
};

// A key of the settings struct S: `field` returns the member of an S it sets.
template <class S>
struct ConfigKey {
  KeyRule rule;
  std::function<Field(S&)> field;
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

// The key of `table` named `key`; an attn::Error when there is none (a table's own mistake).
template <class S>
const ConfigKey<S>& key_of(const std::vector<ConfigKey<S>>& table, const std::string& key) {
  for (const ConfigKey<S>& k : table)
    if (k.rule.key == key) return k;
  fail("no configuration key '", key, "'");
}

// Inner's key `key` as a key of Outer named prefix + key, setting the Inner that `inner` returns:
// `attn train`'s model.heads is TransformerConfig's heads of the run's model.
template <class Outer, class Inner>
ConfigKey<Outer> nested_key(const std::vector<ConfigKey<Inner>>& table, const std::string& key,
                            const std::string& prefix, Inner& (*inner)(Outer&)) {
  const ConfigKey<Inner>& k = key_of(table, key);
  KeyRule rule = k.rule;
  rule.key = prefix + key;
  return {std::move(rule), [field = k.field, inner](Outer& o) { return field(inner(o)); }};
}

// The key named `key`, or nullptr.
const BoundKey* find_key(const std::vector<BoundKey>& keys, const std::string& key);

// Sets one member from a parsed value, or throws attn::Error naming `where` and the key.
void set_field(const BoundKey& k, const nlohmann::json& value, const std::string& where);

// A member's value as JSON (an empty string is null: unset; a float as its shortest decimal).
nlohmann::json field_value(const Field& f);

// Checks that every member's value is one its key accepts (a struct filled in code), or throws
// attn::Error naming `where` and the key.
void check_fields(const std::vector<BoundKey>& keys, const std::string& where);

// Every key with its value, as a JSON object (config.json).
nlohmann::json fields_json(const std::vector<BoundKey>& keys);

// The bounds or words of a key as text ("[0, 1)", "one of: noam, constant"); empty when none.
std::string describe_rule(const KeyRule& rule, const Field& f);

// Every key with its value (the defaults, for a default-constructed struct), its help and its
// range, for --help-config.
std::string describe(const std::vector<BoundKey>& keys);

// The model configs' keys: config.json's reader and writer, validate() and `attn train`'s model.*
// keys all use these (each family's, and the keys the seq2seq families share, declared once).
const std::vector<ConfigKey<TransformerConfig>>& transformer_config_keys();
const std::vector<ConfigKey<RnnConfig>>& rnn_config_keys();
const std::vector<ConfigKey<ClassifierConfig>>& classifier_config_keys();

}  // namespace attn
