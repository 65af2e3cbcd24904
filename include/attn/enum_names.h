// Enumerated settings with names: each is parsed from its name once, where a config file or
// config.json is read, and compared as a value everywhere else. An enum E lists its names in a
// table, and the two helpers below give name() and parse() over it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "attn/error.h"

namespace attn {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E, size_t N>
const char* name_in(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& e : table)
    if (e.value == value) return e.name;
  return "?";
}

// The value named `name`, or an attn::Error naming `what` and every accepted name.
template <class E, size_t N>
E parse_in(const EnumName<E> (&table)[N], std::string_view name, std::string_view what) {
  std::string names;
  for (const EnumName<E>& e : table) {
    if (name == e.name) return e.value;
    names += (names.empty() ? "'" : ", '") + std::string(e.name) + "'";
  }
  fail(std::string(what), " must be one of ", names, ", got '", std::string(name), "'");
}

}  // namespace attn
