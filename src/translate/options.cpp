#include <type_traits>
#include "attn/translate/options.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "attn/error.h"

namespace attn {
namespace {

std::string range_text(double min, double max) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g .. %g", min, max);
  return buf;
}

using T = OptionType;
using Slot = OptionField::Slot;

const std::string kSampling = "Sampling (beam 1; e.g. --sampling-topk 10 --sampling-temperature 0.8 --seed 7)";
const std::string kLength = "Prefix, length and repetition";
const std::string kOutput = "Output";
const std::string kBatching = "Input, output and batching";

OptionField whole(std::string key, std::string flag, int64_t min, int64_t max, Slot (*slot)(TranslateOptions&),
                  std::string group, std::string help) {
  OptionField f;
  f.key = std::move(key);
  f.flag = std::move(flag);
  f.type = T::whole;
  f.min_whole = min;
  f.max_whole = max;
  f.slot = slot;
  f.group = std::move(group);
  f.value_name = "N";
  f.help = std::move(help);
  return f;
}

OptionField real(std::string key, std::string flag, double min, double max, Slot (*slot)(TranslateOptions&),
                 std::string group, std::string help) {
  OptionField f = whole(std::move(key), std::move(flag), 0, 0, slot, std::move(group), std::move(help));
  f.type = T::real;
  f.min_real = min;
  f.max_real = max;
  f.value_name = "X";
  return f;
}

// One of a few names (its enum's values in order).
OptionField choice(std::string key, std::string flag, std::vector<std::string> choices, Slot (*slot)(TranslateOptions&),
                   std::string group, std::string help) {
  OptionField f = whole(std::move(key), std::move(flag), 0, 0, slot, std::move(group), std::move(help));
  f.type = T::choice;
  f.choices = std::move(choices);
  f.value_name = "";
  for (const std::string& c : f.choices) f.value_name += (f.value_name.empty() ? "" : "|") + c;
  return f;
}

// On or off.
OptionField on_off(std::string key, std::string flag, Slot (*slot)(TranslateOptions&), std::string group,
                   std::string help) {
  OptionField f = whole(std::move(key), std::move(flag), 0, 0, slot, std::move(group), std::move(help));
  f.type = T::flag;
  f.value_name = "";
  return f;
}

std::vector<OptionField> make_fields() {
  std::vector<OptionField> f;
  f.push_back(whole("beam_size", "--beam", 1, 1024, [](TranslateOptions& o) -> Slot { return &o.search.beam; }, "",
                    "beam size K (1: greedy)"));
  f.back().short_name = "beam";
  f.push_back(real("length_penalty", "--length-penalty", 0, 100,
                   [](TranslateOptions& o) -> Slot { return &o.search.length_penalty; }, "",
                   "alpha of the GNMT length penalty ((5+len)/6)^alpha (transformers' rules: len^alpha)"));
  f.push_back(choice("search_rules", "--search-rules", {"attn", "transformers", "ctranslate2"},
                     [](TranslateOptions& o) -> Slot { return &o.search.rules; }, "",
                     "whose beam search: attn's, transformers' generate() (the 2K best candidates, score "
                     "logprob / len^alpha): for models imported from Hugging Face, with --length-penalty 1, or "
                     "CTranslate2's translate_batch (transformers' with early stopping; at the maximum length every "
                     "live output competes) (docs/models.md); an imported model's default"));
  f.push_back(on_off("early_stopping", "--early-stopping", [](TranslateOptions& o) -> Slot { return &o.search.early_stopping; },
                     "", "with --search-rules transformers: a sentence is done once beam outputs are finished "
                         "(transformers' early_stopping=True; without it, its default heuristic; =false turns an imported "
                         "model's default off)"));
  f.push_back(on_off("renormalize_logits", "--renormalize-logits",
                     [](TranslateOptions& o) -> Slot { return &o.search.renormalize; }, "",
                     "log-probs renormalised after suppressed tokens and other rules are applied (transformers' "
                     "renormalize_logits; =false turns an imported model's default off)"));
  f.push_back(on_off("eos_at_max_len", "--eos-at-max-len", [](TranslateOptions& o) -> Slot { return &o.search.eos_at_max_len; },
                     kLength, "an output that reaches the maximum length ends with eos (transformers' forced_eos_token_id)"));
  f.push_back(whole("num_hypotheses", "--n-best", 1, 1024, [](TranslateOptions& o) -> Slot { return &o.search.n_best; },
                    "", "print the N best as 'i ||| ids ||| score' lines (i from 0; score: log-prob over the length "
                        "penalty); with sampling, N samples"));
  f.back().short_name = "n_best";
  f.push_back(whole("sampling_topk", "--sampling-topk", 0, 1 << 24,
                    [](TranslateOptions& o) -> Slot { return &o.search.sampling.top_k; }, kSampling,
                    "sample each next token from the K most probable (CTranslate2's sampling_topk: 1, the default: no "
                    "sampling, the beam searches; 0: sample from all tokens)"));
  f.push_back(real("sampling_topp", "--sampling-topp", 1e-9, 1,
                   [](TranslateOptions& o) -> Slot { return &o.search.sampling.top_p; }, kSampling,
                   "sample from the fewest most probable tokens whose probability reaches P (nucleus)"));
  f.push_back(real("sampling_temperature", "--sampling-temperature", 1e-6, 1e6,
                   [](TranslateOptions& o) -> Slot { return &o.search.sampling.temperature; }, kSampling,
                   "divide the log-probs by T before the softmax (< 1 sharper, > 1 flatter)"));
  f.push_back(whole("seed", "--seed", 0, std::numeric_limits<int64_t>::max(),
                    [](TranslateOptions& o) -> Slot { return &o.search.sampling.seed; }, kSampling,
                    "the random stream's seed; an output depends only on it, its input line and the model (not on "
                    "batching or threads). With --n-best N: N independent samples"));
  f.back().value_name = "S";
  f.push_back(whole("min_decoding_length", "--min-len", 0, 1 << 24,
                    [](TranslateOptions& o) -> Slot { return &o.search.min_len; }, kLength,
                    "no eos before the output holds N tokens (prefix included)"));
  f.push_back(whole("max_decoding_length", "--max-len", 0, 1 << 24,
                    [](TranslateOptions& o) -> Slot { return &o.search.max_len; }, kLength,
                    "most tokens output, eos included (0: A x source length + B)"));
  f.back().also = {"max_length"};
  f.back().short_name = "max_len";
  f.push_back(real("max_len_a", "--max-len-a", 0, 1e6, [](TranslateOptions& o) -> Slot { return &o.search.max_len_a; },
                   kLength, "A of the maximum length A x source length + B"));
  f.push_back(whole("max_len_b", "--max-len-b", 0, 1 << 24,
                    [](TranslateOptions& o) -> Slot { return &o.search.max_len_b; }, kLength,
                    "B of the maximum length A x source length + B"));
  f.push_back(whole("no_repeat_ngram_size", "--no-repeat-ngram", 0, 1 << 16,
                    [](TranslateOptions& o) -> Slot { return &o.search.no_repeat_ngram; }, kLength,
                    "no N-gram of tokens twice in an output (e.g. --no-repeat-ngram 3; 0: off)"));
  f.push_back(real("repetition_penalty", "--repetition-penalty", 1e-6, 1e6,
                   [](TranslateOptions& o) -> Slot { return &o.search.repetition_penalty; }, kLength,
                   "log-probs of tokens already in the output times R, then renormalised (R > 1 discourages "
                   "repeats; e.g. --repetition-penalty 1.2)"));
  f.push_back(choice("alignment", "--alignment", {"none", "hard", "soft"}, [](TranslateOptions& o) -> Slot { return &o.alignment; },
                     kOutput, "after each translation, ' ||| ' and the word alignment from the encoder-decoder "
                     "attention (heads averaged; with an ensemble, the first model's): hard (default) "
                     "'source-target' index pairs, or soft (the rows of weights)"));
  f.back().front_ends = kCli | kJson;
  f.back().value_name = "hard|soft";
  f.push_back(whole("alignment_layer", "--alignment-layer", 0, 1 << 16,
                    [](TranslateOptions& o) -> Slot { return &o.alignment_layer; }, kOutput,
                    "the decoder layer alignments are read from, 1-based (0: the second-to-last)"));
  f.push_back(on_off("alignment_words", "--alignment-words", [](TranslateOptions& o) -> Slot { return &o.alignment_words; },
                     kOutput, "align whitespace words instead of SentencePiece pieces"));
  f.back().front_ends = kCli | kJson;
  f.push_back(whole("max_batch_size", "--batch", 1, 65536, [](TranslateOptions& o) -> Slot { return &o.batch; },
                    kBatching, "sentences decoded together"));
  f.back().front_ends = kCli;
  f.push_back(whole("batch_tokens", "--batch-tokens", 0, 1 << 24,
                    [](TranslateOptions& o) -> Slot { return &o.batch_tokens; }, kBatching,
                    "batches of at most N source tokens instead of --batch sentences (CTranslate2's batch_type "
                    "tokens; e.g. --batch-tokens 2048)"));
  f.back().front_ends = kCli;
  f.push_back(choice("on_long", "--on-long", {"split", "truncate", "error"},
                     [](TranslateOptions& o) -> Slot { return &o.on_long; }, kBatching,
                     "a source longer than the model's positions: split (default: translated in pieces that fit, "
                     "their outputs joined on its line; nothing is lost), truncate (its first positions), or error "
                     "(stop); split and truncate warn with the line number"));
  f.push_back(on_off("use_vmap", "", [](TranslateOptions& o) -> Slot { return &o.use_shortlist; }, "",
                     "decode over the translator's shortlist when it has one (attn translate: --shortlist FILE)"));
  f.back().front_ends = kPython | kJson;
  return f;
}

// The value at a slot as --help shows it.
std::string shown(const Slot& s) {
  char buf[64];
  return std::visit(
      [&](auto* p) -> std::string {
        using V = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<V, double>) {
          std::snprintf(buf, sizeof buf, "%g", *p);
          return buf;
        } else if constexpr (std::is_same_v<V, bool>) {
          return *p ? "on" : "off";
        } else if constexpr (std::is_same_v<V, OnLong> || std::is_same_v<V, AlignmentKind> || std::is_same_v<V, SearchRules>) {
          return std::to_string(static_cast<int>(*p));
        } else {
          return std::to_string(*p);
        }
      },
      s);
}

}  // namespace

bool OptionField::named(const std::string& name, unsigned front_end) const {
  if ((front_ends & front_end) == 0) return false;
  if (front_end == kCli) return name == flag;
  if (name == key) return true;
  for (const std::string& a : also)
    if (name == a) return true;
  return front_end == kJson && !short_name.empty() && name == short_name;
}

std::string OptionField::default_text() const {
  TranslateOptions defaults;
  // The front ends' top-k default is CTranslate2's sampling_topk = 1 (no sampling; see finish()).
  defaults.search.sampling.top_k = 1;
  const Slot s = slot(defaults);
  if (type == OptionType::choice) return choices[static_cast<size_t>(std::stoi(shown(s)))];
  return shown(s);
}

const std::vector<OptionField>& translate_option_fields() {
  static const std::vector<OptionField> fields = make_fields();
  return fields;
}

const OptionField* find_translate_option(const std::string& name, unsigned front_end) {
  for (const OptionField& f : translate_option_fields())
    if (f.named(name, front_end)) return &f;
  return nullptr;
}

const OptionField& translate_option(const std::string& key) {
  for (const OptionField& f : translate_option_fields())
    if (f.key == key) return f;
  fail("no translation option '", key, "'");
}

int64_t parse_whole(const std::string& what, const std::string& text, int64_t min, int64_t max) {
  int64_t x = 0;
  const char* end = text.data() + text.size();
  const char* start = text.data() + (text.size() > 1 && text[0] == '+');
  auto [ptr, ec] = std::from_chars(start, end, x);
  check(!text.empty() && ec == std::errc() && ptr == end && x >= min && x <= max, what,
        " needs a whole number in ", min, " .. ", max, ", got '", text, "'");
  return x;
}

std::vector<double> parse_weights(const std::string& text, size_t models, const std::string& name) {
  std::vector<double> weights;
  if (text.empty()) return weights;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    char* end = nullptr;
    double w = std::strtod(item.c_str(), &end);
    check(!item.empty() && end == item.c_str() + item.size() && std::isfinite(w), name, ": '", item,
          "' is not a number (in '", text, "')");
    weights.push_back(w);
  }
  check(weights.size() == models, name, " gives ", weights.size(), " weights for ", models, " models ('", text, "')");
  return weights;
}

TranslateOptionsBuilder::TranslateOptionsBuilder(OptionNameOf name_of, TranslateOptions start)
    : name_of_(std::move(name_of)), o_(std::move(start)) {}

const std::string& TranslateOptionsBuilder::name(const std::string& key) const {
  auto it = names_.find(key);
  if (it == names_.end()) it = names_.emplace(key, name_of_(translate_option(key))).first;
  return it->second;
}

void TranslateOptionsBuilder::set(const OptionField& f, const std::string& text) {
  const std::string& n = name(f.key);
  switch (f.type) {
    case OptionType::whole:
      set_whole(f, parse_whole(n, text, f.min_whole, f.max_whole), text);
      return;
    case OptionType::real: {
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      check(!text.empty() && end == text.c_str() + text.size(), n, " needs a number in ",
            range_text(f.min_real, f.max_real), ", got '", text, "'");
      set_real(f, x, text);
      return;
    }
    case OptionType::flag:
      check(text == "true" || text == "false", n, " is on or off (true or false), got '", text, "'");
      set_flag(f, text == "true");
      return;
    case OptionType::choice: {
      std::string names;
      for (size_t i = 0; i < f.choices.size(); ++i) {
        if (f.key == "alignment" && i == 0) continue;  // no alignment is asked for by leaving it out
        if (text == f.choices[i]) {
          std::visit(
              [&](auto* p) {
                using V = std::remove_pointer_t<decltype(p)>;
                if constexpr (std::is_same_v<V, OnLong> || std::is_same_v<V, AlignmentKind> || std::is_same_v<V, SearchRules>) *p = static_cast<V>(i);
              },
              f.slot(o_));
          given_.insert(f.key);
          return;
        }
        names += (names.empty() ? "" : i + 1 == f.choices.size() ? " or " : ", ") + f.choices[i];
      }
      fail(n, " must be ", names, ", got '", text, "'");
    }
  }
}

void TranslateOptionsBuilder::set_whole(const OptionField& f, int64_t value, const std::string& shown_as) {
  const std::string& n = name(f.key);
  if (f.type == OptionType::real) return set_real(f, static_cast<double>(value), shown_as);
  check(f.type == OptionType::whole && value >= f.min_whole && value <= f.max_whole, n, " needs a whole number in ",
        f.min_whole, " .. ", f.max_whole, ", got '", shown_as, "'");
  std::visit(
      [&](auto* p) {
        using V = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<V, int> || std::is_same_v<V, uint64_t>) *p = static_cast<V>(value);
      },
      f.slot(o_));
  given_.insert(f.key);
}

void TranslateOptionsBuilder::set_real(const OptionField& f, double value, const std::string& shown_as) {
  const std::string& n = name(f.key);
  if (f.type == OptionType::whole) {
    check(std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e18, n,
          " needs a whole number in ", f.min_whole, " .. ", f.max_whole, ", got '", shown_as, "'");
    return set_whole(f, static_cast<int64_t>(value), shown_as);
  }
  check(f.type == OptionType::real && std::isfinite(value) && value >= f.min_real && value <= f.max_real, n,
        " needs a number in ", range_text(f.min_real, f.max_real), ", got '", shown_as, "'");
  *std::get<double*>(f.slot(o_)) = value;
  given_.insert(f.key);
}

void TranslateOptionsBuilder::set_flag(const OptionField& f, bool on) {
  check(f.type == OptionType::flag, name(f.key), " is not an on/off option");
  *std::get<bool*>(f.slot(o_)) = on;
  given_.insert(f.key);
}

void TranslateOptionsBuilder::defaults_from(const TranslateOptions& defaults) {
  TranslateOptions d = defaults;
  for (const OptionField& f : translate_option_fields()) {
    if (given(f.key)) continue;
    if (f.key == "max_decoding_length" && (given("max_len_a") || given("max_len_b"))) continue;
    std::visit([&](auto* to) { *to = *std::get<std::remove_reference_t<decltype(to)>>(f.slot(d)); }, f.slot(o_));
  }
}

TranslateOptions TranslateOptionsBuilder::finish() const {
  TranslateOptions o = o_;
  SearchOptions& s = o.search;
  // CTranslate2's sampling_topk: 1 (its default) takes the most probable token, so it leaves the
  // search as it is (beam included); 0 samples from the whole distribution, K > 1 from the top K.
  // Top-p or a temperature alone sample from the whole distribution (top-k 1 would undo them).
  const bool topk_samples = given("sampling_topk") && s.sampling.top_k != 1;
  s.sampling.on = topk_samples || given("sampling_topp") || given("sampling_temperature");
  if (!given("sampling_topk")) s.sampling.top_k = s.sampling.on ? 0 : 1;
  if (s.sampling.on) {
    check(!given("beam_size") || s.beam == 1, "sampling draws one token per step: ", name("beam_size"),
          " must be 1, got ", s.beam);
    s.beam = 1;
  } else {
    check(s.n_best <= s.beam, name("num_hypotheses"), " must be between 1 and ", name("beam_size"), " (", s.beam,
          "), got ", s.n_best);
  }
  check(!given("max_decoding_length") || !(given("max_len_a") || given("max_len_b")), name("max_decoding_length"),
        " is a fixed length; ", name("max_len_a"), "/", name("max_len_b"), " give one per source: use one or the other");
  check(!given("early_stopping") || s.rules == SearchRules::transformers, name("early_stopping"), " is a rule of ",
        name("search_rules"), " transformers");
  o.all_hypotheses = given("num_hypotheses");
  check(o.alignment != AlignmentKind::none || (o.alignment_layer == 0 && !o.alignment_words),
        name("alignment_layer"), " and ", name("alignment_words"), " need ", name("alignment"));
  return o;
}

void check_for_ids(const TranslateOptions& o, const OptionNameOf& name_of, const std::string& ids_name) {
  check(!o.alignment_words, name_of(translate_option("alignment_words")), " needs text (SentencePiece pieces), not ",
        ids_name);
}

}  // namespace attn
