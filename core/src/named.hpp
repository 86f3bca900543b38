// A value's name on the command line and in the summary, from one table that serves both
// ways: parse_named reads a name (a UsageError listing the names otherwise), name_of
// writes one.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "config.hpp"

namespace psb {

template <class T>
struct Named {
  const char *name;
  T value;
};

// The name of value in table; "?" when it has none.
template <class T, size_t N>
const char *name_of(const Named<T> (&table)[N], T value) {
  for (auto &n : table)
    if (n.value == value) return n.name;
  return "?";
}

// The value named `value` in table; arg: the argument it was given to, for the message.
template <class T, size_t N>
T parse_named(const Named<T> (&table)[N], std::string_view arg, std::string_view value) {
  std::string choices;
  for (auto &n : table) {
    if (value == n.name) return n.value;
    choices += choices.empty() ? "" : "|";
    choices += n.name;
  }
  throw UsageError(std::string(arg) + ": '" + std::string(value) + "' is not one of " + choices);
}

}  // namespace psb
