// The tables of classification and scoring options (classify/options.h, translate/score_options.h):
// every field walked, so that each option has one default (its struct's, shown by --help), one
// range (its bounds accepted, one past them refused) and one message naming the option as the
// front end spells it; and the one rule for a top_k above the model's labels.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attn/classify/options.h"
#include "attn/error.h"
#include "attn/translate/score_options.h"

namespace attn {
namespace {

// attn ARGS's standard output and error.
std::string run_attn(const std::string& arguments) {
  const std::string cmd = std::string(ATTN_BINARY) + " " + arguments + " 2>&1 < /dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

// The message of f(), "" when it does not throw.
template <class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Walks every field of a table: names, default, bounds and messages, for each front end's spelling.
template <class Options>
void walk(const std::vector<WholeOption<Options>>& fields, const std::string& command) {
  const std::string help = run_attn(command + " --help");
  std::set<std::string> keys, flags;
  for (const WholeOption<Options>& f : fields) {
    SCOPED_TRACE(f.key);
    EXPECT_TRUE(keys.insert(f.key).second) << "a key twice";
    EXPECT_TRUE(flags.insert(f.flag).second) << "a flag twice";
    EXPECT_EQ(f.flag.rfind("--", 0), 0u);
    EXPECT_FALSE(f.help.empty());
    EXPECT_LE(f.min, f.max);
    EXPECT_EQ(find_whole_option(fields, f.flag, kCli) == &f, (f.front_ends & kCli) != 0);
    EXPECT_EQ(find_whole_option(fields, f.key, kPython) == &f, (f.front_ends & kPython) != 0);
    EXPECT_EQ(find_whole_option(fields, f.key, kJson) == &f, (f.front_ends & kJson) != 0);
    EXPECT_EQ(find_whole_option(fields, f.key, kCli), nullptr) << "the command line names options by flag only";

    // The default is the struct's, inside the range, and what a builder given nothing holds.
    const Options defaults{};
    Options copy = defaults;
    EXPECT_EQ(f.default_value(), *f.slot(copy));
    EXPECT_GE(f.default_value(), f.min);
    EXPECT_LE(f.default_value(), f.max);
    WholeOptionsBuilder<Options> untouched([](const WholeOption<Options>& g) { return g.flag; });
    Options built = untouched.options();
    EXPECT_EQ(*f.slot(built), f.default_value());

    // --help shows the flag with the table's default and help.
    if (f.front_ends & kCli) {
      const size_t at = help.find(f.flag + " N=" + std::to_string(f.default_value()));
      EXPECT_NE(at, std::string::npos) << help;
      EXPECT_NE(help.find(f.help.substr(0, 30)), std::string::npos) << help;
    }

    // Each front end's spelling: its bounds accepted, one past them refused naming it and the range.
    for (const auto& name_of : std::vector<std::function<std::string(const WholeOption<Options>&)>>{
             [](const WholeOption<Options>& g) { return g.flag; },
             [](const WholeOption<Options>& g) { return "\"" + g.key + "\""; }}) {
      const std::string name = name_of(f);
      const std::string range = std::to_string(f.min) + " .. " + std::to_string(f.max);
      WholeOptionsBuilder<Options> b(name_of);
      for (const int64_t ok : {f.min, f.max}) {
        b.set_whole(f, ok, std::to_string(ok));
        Options got = b.options();
        EXPECT_EQ(*f.slot(got), ok);
        b.set(f, std::to_string(ok));
        got = b.options();
        EXPECT_EQ(*f.slot(got), ok);
      }
      for (const int64_t bad : {f.min - 1, f.max + 1}) {
        const std::string shown = std::to_string(bad);
        const std::string want = name + " needs a whole number in " + range + ", got '" + shown + "'";
        EXPECT_EQ(message_of([&] { b.set_whole(f, bad, shown); }), want);
        EXPECT_EQ(message_of([&] { b.set(f, shown); }), want) << "as text, the same message";
      }
      for (const std::string bad : {"0x10", "2.5", "", "99999999999999999999"})
        EXPECT_EQ(message_of([&] { b.set(f, bad); }), name + " needs a whole number in " + range + ", got '" + bad + "'");
    }
  }
}

TEST(ClassifyOptions, EveryFieldHasOneDefaultOneRangeOneMessage) {
  walk(classify_option_fields(), "classify");
  EXPECT_EQ(classify_option("top_k").flag, "--top-k");
  EXPECT_EQ(classify_option("top_k").max, kMaxTopK);
  EXPECT_EQ(classify_option("max_batch_size").flag, "--batch");
  EXPECT_EQ(find_classify_option("max_batch_size", kJson), nullptr) << "the server batches its requests itself";
  EXPECT_THROW(classify_option("topk"), Error);
}

TEST(ScoreOptions, EveryFieldHasOneDefaultOneRangeOneMessage) {
  walk(score_option_fields(), "score");
  EXPECT_EQ(score_option("max_batch_size").flag, "--batch");
  EXPECT_EQ(ScoreOptions{}.batch, 32);
}

// One rule in every front end: a top_k above the model's labels gives all of them.
TEST(ClassifyOptions, TopKAboveTheLabelsGivesThemAll) {
  ClassifyOptions o;
  EXPECT_EQ(labels_per_text(o, 5), 1);
  o.top_k = 3;
  EXPECT_EQ(labels_per_text(o, 5), 3);
  EXPECT_EQ(labels_per_text(o, 2), 2);
  o.top_k = kMaxTopK;
  EXPECT_EQ(labels_per_text(o, 15), 15);
}

}  // namespace
}  // namespace attn
