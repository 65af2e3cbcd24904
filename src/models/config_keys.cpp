#include "attn/models/config_keys.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "attn/error.h"

namespace attn {
namespace {

// A float as the double its shortest decimal form reads as: 0.1f shows as 0.1.
double shortest(float x) {
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
  return std::strtod(std::string(buf, end).c_str(), nullptr);
}

std::string number_text(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// The bounds of a number, the field's type included: integers of the field's width.
Bounds effective_bounds(const KeyRule& rule, const Field& f) {
  Bounds b = rule.bounds;
  auto limit = [&](double lo, double hi) {
    b.min = std::max(b.min, lo);
    b.max = std::min(b.max, hi);
  };
  if (std::holds_alternative<int*>(f)) limit(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  if (std::holds_alternative<int64_t*>(f) || std::holds_alternative<uint64_t*>(f))
    limit(std::holds_alternative<uint64_t*>(f) ? 0.0 : -9.2233720368547758e18, 9.2233720368547758e18);
  if (std::holds_alternative<float*>(f)) limit(-std::numeric_limits<float>::max(), std::numeric_limits<float>::max());
  return b;
}

bool within(const Bounds& b, double x) {
  bool low = b.min_open ? x > b.min : x >= b.min;
  bool high = b.max_open ? x < b.max : x <= b.max;
  return std::isfinite(x) && low && high;
}

bool is_integer_field(const Field& f) {
  return std::holds_alternative<int*>(f) || std::holds_alternative<int64_t*>(f) ||
         std::holds_alternative<uint64_t*>(f);
}

// A whole number within the key's bounds, as int64_t (the widest any integer key needs).
int64_t checked_integer(const BoundKey& k, const nlohmann::json& v, const std::string& where) {
  const std::string& key = k.rule->key;
  check(v.is_number_integer(), where, ": key '", key, "' must be a whole number ",
        describe_rule(*k.rule, k.field), ", got ", v.dump());
  bool fits = !v.is_number_unsigned() || v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
  int64_t x = fits ? v.get<int64_t>() : 0;
  check(fits && within(effective_bounds(*k.rule, k.field), static_cast<double>(x)), where, ": key '", key,
        "' must be a whole number ", describe_rule(*k.rule, k.field), ", got ", v.dump());
  return x;
}

double checked_number(const BoundKey& k, const nlohmann::json& v, const std::string& where) {
  const std::string& key = k.rule->key;
  check(v.is_number() && within(effective_bounds(*k.rule, k.field), v.get<double>()), where, ": key '", key,
        "' must be a number ", describe_rule(*k.rule, k.field), ", got ", v.dump());
  return v.get<double>();
}

std::string checked_string(const BoundKey& k, const nlohmann::json& v, const std::string& where) {
  const std::string& key = k.rule->key;
  std::string s;
  if (v.is_null()) s = "";
  else if (v.is_number() || v.is_boolean()) s = v.dump();  // a file name like 2024 stays a string
  else if (v.is_string()) s = v.get<std::string>();
  else fail(where, ": key '", key, "' must be a string, got ", v.dump());
  const auto& words = k.rule->words;
  bool known = words.empty();
  for (const auto& w : words) known = known || w == s;
  check(known, where, ": key '", key, "' must be ", describe_rule(*k.rule, k.field), ", got '", s, "'");
  return s;
}

}  // namespace

const BoundKey* find_key(const std::vector<BoundKey>& keys, const std::string& key) {
  for (const auto& k : keys)
    if (k.rule->key == key) return &k;
  return nullptr;
}

void set_field(const BoundKey& k, const nlohmann::json& v, const std::string& where) {
  const std::string& key = k.rule->key;
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, bool>) {
          // YAML 1.1's other words for them, which the reader leaves as text
          const std::string w = v.is_string() ? v.get<std::string>() : "";
          const bool yes = w == "yes" || w == "on", no = w == "no" || w == "off";
          check(v.is_boolean() || yes || no, where, ": key '", key, "' must be true or false, got ", v.dump());
          *p = v.is_boolean() ? v.get<bool>() : yes;
        } else if constexpr (std::is_integral_v<T>) {
          *p = static_cast<T>(checked_integer(k, v, where));
        } else if constexpr (std::is_floating_point_v<T>) {
          *p = static_cast<T>(checked_number(k, v, where));
        } else if constexpr (std::is_same_v<T, std::string>) {
          *p = checked_string(k, v, where);
        } else {
          parse(checked_string(k, v, where), p, key);
        }
      },
      k.field);
}

nlohmann::json field_value(const Field& f) {
  return std::visit(
      [](auto* p) -> nlohmann::json {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) return p->empty() ? nlohmann::json() : nlohmann::json(*p);
        else if constexpr (std::is_same_v<T, float>) return shortest(*p);
        else if constexpr (std::is_enum_v<T>) return name(*p);
        else return *p;
      },
      f);
}

std::string describe_rule(const KeyRule& rule, const Field& f) {
  if (!rule.words.empty()) {
    std::string out = "one of";
    for (size_t i = 0; i < rule.words.size(); ++i) out += (i ? ", " : ": ") + rule.words[i];
    return out;
  }
  if (std::holds_alternative<std::string*>(f) || std::holds_alternative<bool*>(f)) return "";
  Bounds b = is_integer_field(f) ? effective_bounds(rule, f) : rule.bounds;
  const bool whole = is_integer_field(f);
  auto text = [&](double x) { return whole ? std::to_string(static_cast<int64_t>(x)) : number_text(x); };
  if (b.max >= 9.2e18)  // no upper bound but the type's
    return (b.min_open ? "> " : ">= ") + text(b.min);
  if (whole) return "in " + text(b.min) + " .. " + text(b.max);
  return std::string("in ") + (b.min_open ? "(" : "[") + text(b.min) + ", " + text(b.max) + (b.max_open ? ")" : "]");
}

void check_fields(const std::vector<BoundKey>& keys, const std::string& where) {
  for (const BoundKey& k : keys) set_field(k, field_value(k.field), where);
}

nlohmann::json fields_json(const std::vector<BoundKey>& keys) {
  nlohmann::json j = nlohmann::json::object();
  for (const BoundKey& k : keys) j[k.rule->key] = field_value(k.field);
  return j;
}

std::string describe(const std::vector<BoundKey>& keys) {
  std::string out;
  for (const auto& k : keys) {
    nlohmann::json v = field_value(k.field);
    std::string left = "  " + k.rule->key + ": " + (v.is_null() ? "(unset)" : v.dump());
    if (left.size() < 44) left.resize(44, ' ');
    else left += "\n" + std::string(44, ' ');
    std::string range = describe_rule(*k.rule, k.field);
    out += left + k.rule->help + (range.empty() ? "" : " (" + range + ")") + "\n";
  }
  return out;
}

}  // namespace attn
