// The options of one translation, as every front end takes them. attn translate's flags, the
// Python module's keyword arguments (CTranslate2's names: beam_size, num_hypotheses, ...) and
// attn serve's JSON fields are one table, translate_option_fields(): each option is declared
// there once, with its names, type, range, default (TranslateOptions{}'s) and help, and is checked
// here by one function, so it has one default, one range and one message wherever it is set. A
// front end only spells the option's name its own way in the messages (NameOf).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "attn/decode/long_lines.h"
#include "attn/decode/search.h"

namespace attn {

// Word alignments from the encoder-decoder attention (decode/alignment.h): none, the hard links
// "source-target", or the soft rows of weights.
enum class AlignmentKind { none, hard, soft };

struct TranslateOptions {
  SearchOptions search;          // beam, length penalty, lengths, repetition rules, sampling
  bool all_hypotheses = false;   // num_hypotheses given: every hypothesis is returned, not only the best
  AlignmentKind alignment = AlignmentKind::none;
  int alignment_layer = 0;       // the decoder layer alignments are read from, 1-based; 0: the second-to-last
  bool alignment_words = false;  // over whitespace words instead of SentencePiece pieces
  int batch = 32;                // sentences searched together
  int batch_tokens = 0;          // > 0: searches of at most this many source tokens instead of `batch` sentences
  OnLong on_long = OnLong::split;  // a source longer than the model's positions
  bool use_shortlist = true;     // the translator's shortlist, when it has one (CTranslate2's use_vmap)
};

// Who sets a field: the command line, Python's keyword arguments, the server's JSON fields.
enum OptionFrontEnd : unsigned { kCli = 1u, kPython = 2u, kJson = 4u };

enum class OptionType { whole, real, choice, flag };

// One option: its names, type, range and help. The value lives in TranslateOptions at `slot`.
struct OptionField {
  using Slot = std::variant<int*, double*, uint64_t*, bool*, OnLong*, AlignmentKind*, SearchRules*>;

  std::string key;                 // CTranslate2's keyword: Python's argument and a JSON field
  std::vector<std::string> also;   // more names of it for Python and JSON (max_length)
  std::string short_name;          // the JSON API's short name (beam, n_best, max_len); "" for none
  std::string flag;                // attn translate's flag
  OptionType type = OptionType::whole;
  int64_t min_whole = 0, max_whole = 0;  // whole: the accepted range
  double min_real = 0, max_real = 0;     // real: the accepted range (finite)
  std::vector<std::string> choices;      // choice: the accepted names, in the order of the enum's values
  unsigned front_ends = kCli | kPython | kJson;
  std::string group, value_name, help;   // --help's group, the value's name ("N") and text
  Slot (*slot)(TranslateOptions&) = nullptr;

  bool named(const std::string& name, unsigned front_end) const;
  // The default, as --help shows it: TranslateOptions{}'s value.
  std::string default_text() const;
};

// Every option of a translation, in --help's order.
const std::vector<OptionField>& translate_option_fields();
// The option `name` names for a front end (key, `also`, and for JSON the short name); null if none.
const OptionField* find_translate_option(const std::string& name, unsigned front_end);
// The field of key `key` (it must exist).
const OptionField& translate_option(const std::string& key);

// How a front end spells an option in its messages: "--beam", "beam_size", "\"beam\"".
using OptionNameOf = std::function<std::string(const OptionField&)>;

// Turns the values a front end was given into checked TranslateOptions: each value checked for
// its field's type and range as it is set, the rules between options at finish(). Errors are
// attn::Error with the option named by `name_of`.
class TranslateOptionsBuilder {
 public:
  explicit TranslateOptionsBuilder(OptionNameOf name_of, TranslateOptions start = {});

  // A value as text (a flag's value, a string given in Python or JSON), parsed as the field's type.
  void set(const OptionField& f, const std::string& text);
  // A number given as one; `shown` is how the caller wrote it (for messages).
  void set_whole(const OptionField& f, int64_t value, const std::string& shown);
  void set_real(const OptionField& f, double value, const std::string& shown);
  void set_flag(const OptionField& f, bool on);
  // Every field not given takes `defaults`' value (a model's, translate/model_defaults.h): a given
  // value wins, and a length given as max_len_a / max_len_b keeps a default max_decoding_length out.
  void defaults_from(const TranslateOptions& defaults);
  bool given(const std::string& key) const { return given_.count(key) > 0; }
  const std::string& name(const std::string& key) const;

  // The options with the rules between them checked (sampling takes beam 1, n_best <= beam, one of
  // max_len and max_len_a/b, alignment settings need an alignment).
  TranslateOptions finish() const;

 private:
  OptionNameOf name_of_;
  TranslateOptions o_;
  std::set<std::string> given_;
  mutable std::map<std::string, std::string> names_;
};

// The options' rule for token-id input: alignments over words need text.
void check_for_ids(const TranslateOptions& o, const OptionNameOf& name_of, const std::string& ids_name);

// "0.6,0.4" -> {0.6, 0.4}: an ensemble's weights, one finite number per model ({} for ""); an
// error naming `name` otherwise.
std::vector<double> parse_weights(const std::string& text, size_t models, const std::string& name);

// Whole number parsing shared with the config keys: decimal digits with an optional sign, in
// [min, max], else an attn::Error naming `what`.
int64_t parse_whole(const std::string& what, const std::string& text, int64_t min, int64_t max);

}  // namespace attn
