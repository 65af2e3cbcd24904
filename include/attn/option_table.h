// Small tables of whole-number options in the shape of translate/options.h's: classification's
// (classify/options.h) and scoring's (translate/score_options.h). Each option is declared once,
// with its names (a flag for the command line, a key for Python's keyword argument and the JSON
// field), range, help and default (the options struct's), and checked by one builder, so that it
// has one default, one range and one message wherever it is set. translate/options.h's
// OptionField is not reused because its slots, types (reals, choices, flags) and rules between
// options are TranslateOptions's own; making it a template would touch every translation front end
// for tables that hold only whole numbers. The front-end constants (kCli, kPython, kJson) and the
// whole-number parsing (parse_whole, hence the message) are translate/options.h's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/translate/options.h"  // OptionFrontEnd, parse_whole

namespace attn {

// One whole-number option of an `Options` struct, its value at `slot`.
template <class Options>
struct WholeOption {
  std::string key;   // Python's keyword argument and the JSON field
  std::string flag;  // the command's flag
  int64_t min = 0, max = 0;  // the accepted range
  unsigned front_ends = kCli | kPython | kJson;
  std::string help;  // --help's text
  int64_t* (*slot)(Options&) = nullptr;

  bool named(const std::string& name, unsigned front_end) const {
    return (front_ends & front_end) != 0 && name == (front_end == kCli ? flag : key);
  }
  // The default: Options{}'s value.
  int64_t default_value() const {
    Options defaults;
    return *slot(defaults);
  }
};

// The field of `fields` that `name` names for a front end; null if none.
template <class Options>
const WholeOption<Options>* find_whole_option(const std::vector<WholeOption<Options>>& fields, const std::string& name,
                                              unsigned front_end) {
  for (const WholeOption<Options>& f : fields)
    if (f.named(name, front_end)) return &f;
  return nullptr;
}

// Turns the values a front end was given into checked Options, each value checked for its
// field's range as it is set. Errors are attn::Error naming the option as `name_of` spells it
// ("--top-k", "\"top_k\""), with parse_whole's message: "<name> needs a whole number in 1 .. 1048576, got '0'".
template <class Options>
class WholeOptionsBuilder {
 public:
  using Field = WholeOption<Options>;
  using NameOf = std::function<std::string(const Field&)>;

  explicit WholeOptionsBuilder(NameOf name_of, Options start = {}) : name_of_(std::move(name_of)), o_(start) {}

  // A value as text (a flag's value): decimal digits with an optional sign.
  void set(const Field& f, const std::string& text) { *f.slot(o_) = parse_whole(name_of_(f), text, f.min, f.max); }
  // A number given as one; `shown` is how the caller wrote it (for the message).
  void set_whole(const Field& f, int64_t value, const std::string& shown) {
    check(value >= f.min && value <= f.max, name_of_(f), " needs a whole number in ", f.min, " .. ", f.max, ", got '",
          shown, "'");
    *f.slot(o_) = value;
  }
  const Options& options() const { return o_; }

 private:
  NameOf name_of_;
  Options o_;
};

}  // namespace attn
