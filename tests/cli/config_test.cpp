// The configuration keys of `attn train`: every key of both tables has help, a default (its
// field's initialiser) that its own range accepts and --help-config prints, and rejects an
// out-of-range or mistyped --set with a message naming it. The recipe's defaults are the options
// structs' own.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "attn/error.h"
#include "attn/train/model_size.h"
#include "attn/train/run_config.h"

namespace attn::cli {
namespace {

// The message of the attn::Error that loading `set` throws, or "" when it loads.
template <class Run>
std::string error_of(const std::vector<ConfigKey<Run>>& table, const std::string& set) {
  Run r;
  try {
    load_config("", {set}, bind(table, r), {"task"});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Values a key must refuse: of the wrong type, and just outside its range.
std::vector<std::string> bad_values(const KeyRule& rule, const Field& f) {
  std::vector<std::string> out;
  auto outside = [&](bool whole) {
    char buf[64];
    const Bounds& b = rule.bounds;
    if (std::isfinite(b.min)) {
      std::snprintf(buf, sizeof buf, "%.17g", b.min_open ? b.min : b.min - 1);
      out.push_back(buf);
    }
    if (std::isfinite(b.max)) {
      std::snprintf(buf, sizeof buf, "%.17g", b.max_open ? b.max : b.max + 1);
      out.push_back(buf);
    }
    if (whole) out.push_back("32.7");
    out.push_back("abc");
  };
  if (std::holds_alternative<bool*>(f)) out = {"maybe", "2"};
  else if (std::holds_alternative<int*>(f)) outside(true), out.push_back("4294967297");
  else if (std::holds_alternative<int64_t*>(f) || std::holds_alternative<uint64_t*>(f))
    outside(true), out.push_back("99999999999999999999");
  else if (std::holds_alternative<float*>(f) || std::holds_alternative<double*>(f)) outside(false);
  else if (!rule.words.empty() || std::holds_alternative<BudgetClock*>(f)) out = {"no-such-word"};
  return out;
}

template <class Run>
void check_every_key(const std::vector<ConfigKey<Run>>& table, const std::string& task) {
  Run defaults;
  const std::string help_config = describe_defaults(task);
  const auto* first = reinterpret_cast<const char*>(&defaults);
  for (const ConfigKey<Run>& k : table) {
    SCOPED_TRACE(task + " " + k.rule.key);
    const Field f = k.field(defaults);
    // The key sets a member of the run's settings, and its default is that member's initialiser.
    const char* member = std::visit([](auto* p) { return reinterpret_cast<const char*>(p); }, f);
    EXPECT_TRUE(member >= first && member < first + sizeof(Run));
    EXPECT_FALSE(k.rule.help.empty());
    nlohmann::json value = field_value(f);
    std::string shown = "  " + k.rule.key + ": " + (value.is_null() ? "(unset)" : value.dump());
    EXPECT_NE(help_config.find(shown), std::string::npos) << "--help-config lacks '" << shown << "'";
    // The default is one the key's own rule accepts.
    if (!value.is_null()) {
      Run r;
      EXPECT_NO_THROW(set_field({&k.rule, k.field(r)}, value, "default")) << value.dump();
    }
    for (const std::string& bad : bad_values(k.rule, f)) {
      std::string message = error_of(table, k.rule.key + "=" + bad);
      EXPECT_NE(message.find("'" + k.rule.key + "'"), std::string::npos) << bad << ": '" << message << "'";
    }
  }
}

TEST(ConfigKeys, EveryTranslationKey) { check_every_key(translation_keys(), "translation"); }
TEST(ConfigKeys, EveryClassificationKey) { check_every_key(classification_keys(), "classification"); }

// The recipe the README's commands rely on, read from the options struct and the table alike.
TEST(ConfigKeys, RecipeDefaultsAreTheStructs) {
  TranslationTrainOptions o;
  EXPECT_EQ(o.max_tokens, 2048);
  EXPECT_EQ(o.checkpoint_minutes, 15.0);
  EXPECT_EQ(o.keep_checkpoints, 5);
  EXPECT_EQ(o.schedule.warmup, 400);
  EXPECT_EQ(common_of(o.model).d_model, 256);
  TranslationRun run = load_translation_run("", {"train.max_steps=10"});
  EXPECT_EQ(run.o.max_tokens, o.max_tokens);
  EXPECT_EQ(run.o.schedule.d_model, 256);  // follows model.d_model
  EXPECT_EQ(run.threads, 2);
  EXPECT_EQ(run.precision, "auto");
  ClassificationTrainOptions c;
  EXPECT_EQ(c.validate_every, 100);
  EXPECT_EQ(c.patience, 1000);
  EXPECT_EQ(load_classification_run("", {}).precision, "fp32");
}

TEST(ConfigKeys, NumbersKeepTheirType) {
  TranslationRun r = load_translation_run("", {"train.max_steps=10", "train.seed=9223372036854775807",
                                               "train.lr=1", "data.tokenizer=2024", "train.clock=cpu"});
  EXPECT_EQ(r.o.seed, 9223372036854775807ull);
  EXPECT_EQ(r.o.schedule.lr, 1.0);
  EXPECT_EQ(r.o.tokenizer, "2024");  // a file name made of digits stays a string
  EXPECT_EQ(r.o.clock, BudgetClock::cpu);
  // YAML 1.1's yes/no/on/off: text for a text key (a directory called "on" stays "on"), true or
  // false for a key that takes one.
  r = load_translation_run("", {"train.max_steps=10", "model_dir=on", "data.tokenizer=no", "model.norm_first=off",
                                "train.allreduce_overlap=yes"});
  EXPECT_EQ(r.o.model_dir, "on");
  EXPECT_EQ(r.o.tokenizer, "no");
  EXPECT_FALSE(r.model.transformer.norm_first);
  EXPECT_TRUE(r.o.allreduce.overlap);
  r = load_translation_run("", {"train.max_steps=10", "model.norm_first=on", "train.allreduce_overlap=false"});
  EXPECT_TRUE(r.model.transformer.norm_first);
  EXPECT_FALSE(r.o.allreduce.overlap);
  EXPECT_NE(error_of(translation_keys(), "model.norm_first=maybe").find("must be true or false"), std::string::npos);
}

TEST(ConfigKeys, FileThenSetAndUnknownKeys) {
  auto path = std::filesystem::temp_directory_path() / ("attn_config_test_" + std::to_string(getpid()) + ".yaml");
  std::ofstream(path) << "task: translation\ntrain:\n  warmup: 800\n  max_steps: 5\nmodel:\n  type: rnn\n";
  TranslationRun r = load_translation_run(path.string(), {"train.warmup=900"});
  EXPECT_EQ(r.o.schedule.warmup, 900);
  EXPECT_EQ(r.o.max_steps, 5);
  EXPECT_EQ(common_of(r.o.model).score, ScoreKind::additive) << "the RNN's score when none is given";
  std::ofstream(path) << "train:\n  warmpu: 800\n";
  try {
    load_translation_run(path.string(), {});
    ADD_FAILURE() << "an unknown key was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'train.warmpu'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_NE(error_of(translation_keys(), "train.decay=sideways").find("'train.decay'"), std::string::npos);
}

}  // namespace
}  // namespace attn::cli

namespace attn::cli {
namespace {

std::string run_error(const std::vector<Override>& sets) {
  try {
    load_translation_run("", sets);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// Each family's own keys: a Transformer key in an RNN run (or the reverse) is an error naming it.
TEST(ConfigKeys, EachModelTypeTakesOnlyItsKeys) {
  EXPECT_NE(run_error({"model.type=rnn", "model.heads=4", "train.max_steps=1"}).find("model.heads"), std::string::npos);
  EXPECT_NE(run_error({"model.rnn_cell=gru", "train.max_steps=1"}).find("model.rnn_cell"), std::string::npos);
  TranslationRun r = load_translation_run("", {"model.type=rnn", "model.rnn_cell=gru", "model.d_model=64",
                                               "train.max_steps=1"});
  ASSERT_EQ(kind_of(r.o.model), ModelKind::rnn);
  EXPECT_EQ(std::get<RnnConfig>(r.o.model).cell, RnnCell::gru);
  EXPECT_EQ(std::get<RnnConfig>(r.o.model).d_model, 64) << "a shared key reaches the RNN";
  EXPECT_NE(run_error({"model.max_len=1000000000000000000", "train.max_steps=1"}).find("max_len"), std::string::npos);
}

// model.size: auto needs a time budget and no dimension; a named size fills the dimensions not given.
TEST(ConfigKeys, ModelSize) {
  const TransformerConfig defaults = std::get<TransformerConfig>(TranslationTrainOptions{}.model);
  const ModelSize& reference = reference_size();
  EXPECT_EQ(reference.d_model, defaults.d_model) << "the probe measures the recipe's own size";
  EXPECT_EQ(reference.heads, defaults.heads);
  EXPECT_EQ(reference.layers, defaults.encoder_layers);
  EXPECT_EQ(reference.layers, defaults.decoder_layers);
  EXPECT_EQ(reference.d_ff, defaults.d_ff);
  EXPECT_TRUE(load_translation_run("", {"train.max_minutes=10"}).o.auto_size);
  EXPECT_FALSE(load_translation_run("", {"train.max_steps=10"}).o.auto_size) << "no time budget to choose for";
  EXPECT_FALSE(load_translation_run("", {"train.max_minutes=10", "model.d_ff=512"}).o.auto_size);
  EXPECT_FALSE(load_translation_run("", {"train.max_minutes=10", "model.type=rnn"}).o.auto_size);
  TranslationRun r = load_translation_run("", {"train.max_minutes=10", "model.size=medium", "model.heads=12"});
  EXPECT_FALSE(r.o.auto_size);
  const TransformerConfig& t = std::get<TransformerConfig>(r.o.model);
  EXPECT_EQ(t.d_model, 384);
  EXPECT_EQ(t.encoder_layers, 4);
  EXPECT_EQ(t.d_ff, 1536);
  EXPECT_EQ(t.heads, 12) << "a dimension given overrides the size's";
  EXPECT_EQ(r.o.schedule.d_model, 384) << "the schedule follows the size's d_model";
  EXPECT_NE(run_error({"train.max_minutes=1", "model.size=auto", "model.d_model=64"}).find("model.size auto"),
            std::string::npos);
  EXPECT_NE(run_error({"train.max_steps=1", "model.size=small", "model.type=rnn"}).find("model.size"),
            std::string::npos);
  EXPECT_NE(run_error({"train.max_steps=1", "model.size=huge"}).find("model.size"), std::string::npos);
}

// The rule's bands rise with the budget, from the smallest size to the largest.
TEST(ModelSizeRule, BandsRiseWithTheBudget) {
  const std::vector<ModelSize>& sizes = model_sizes();
  ASSERT_GE(sizes.size(), 3u);
  for (size_t i = 1; i < sizes.size(); ++i) {
    EXPECT_GT(sizes[i].below_reference_steps, sizes[i - 1].below_reference_steps) << sizes[i].name;
    EXPECT_GT(sizes[i].d_model, sizes[i - 1].d_model) << sizes[i].name;
    EXPECT_EQ(&size_for_budget(sizes[i - 1].below_reference_steps), &sizes[i]) << "a band's bound starts the next";
  }
  EXPECT_EQ(&size_for_budget(0), &sizes.front());
  EXPECT_EQ(&size_for_budget(1e12), &sizes.back());
  EXPECT_EQ(&size_for_budget(sizes.front().below_reference_steps - 1), &sizes.front());
  try {
    model_size("huge");
    ADD_FAILURE() << "an unknown size was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tiny, small, medium, base"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn::cli
