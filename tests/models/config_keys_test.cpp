// Each model config is declared once, by its table of keys (models/config_keys.h): config.json's
// writer writes every key of the table and nothing else, its reader refuses a value the key's
// range or words do not allow (naming the file and the key) and reads back what the writer wrote,
// validate() holds a config made in code to the same ranges, and `attn train`'s model.* keys are
// the model tables' own keys (the same range, words and help).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/models/config_keys.h"
#include "attn/models/seq2seq.h"
#include "attn/train/run_config.h"

namespace attn {
namespace {

using nlohmann::json;

// Values a key must refuse: of the wrong type, and just outside its range.
std::vector<json> bad_values(const KeyRule& rule, const Field& f) {
  if (std::holds_alternative<bool*>(f)) return {2, "maybe", nullptr};
  if (!rule.words.empty()) return {"no-such-word", 3};
  std::vector<json> out = {"abc", nullptr};
  if (std::isfinite(rule.bounds.min)) out.push_back(rule.bounds.min_open ? rule.bounds.min : rule.bounds.min - 1);
  if (std::isfinite(rule.bounds.max)) out.push_back(rule.bounds.max_open ? rule.bounds.max : rule.bounds.max + 1);
  if (std::holds_alternative<int64_t*>(f) || std::holds_alternative<int*>(f)) {
    out.push_back(2.5);
    out.push_back(json(18446744073709551615ULL));
  }
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Walks every key of a model table through its config's writer, reader and validate().
template <class Config>
void check_every_key(const std::vector<ConfigKey<Config>>& table, Config defaults,
                     const std::function<json(const Config&)>& write,
                     const std::function<Config(const json&, const std::string&)>& read) {
  const json written = write(defaults);
  ASSERT_EQ(write(read(written, "x/config.json")), written) << "the writer's output reads back the same";
  size_t keys_written = 0;
  for (const ConfigKey<Config>& k : table) {
    SCOPED_TRACE(k.rule.key);
    EXPECT_FALSE(k.rule.help.empty());
    Config c = defaults;
    const Field f = k.field(c);
    ASSERT_TRUE(written.contains(k.rule.key)) << "written: " << written.dump();
    EXPECT_EQ(written[k.rule.key], field_value(f)) << "written as its member's value";
    ++keys_written;
    for (const json& bad : bad_values(k.rule, f)) {
      json j = written;
      j[k.rule.key] = bad;
      const std::string e = error_of([&] { read(j, "x/config.json"); });
      EXPECT_NE(e.find("x/config.json"), std::string::npos) << bad.dump() << ": '" << e << "'";
      EXPECT_NE(e.find("'" + k.rule.key + "'"), std::string::npos) << bad.dump() << ": '" << e << "'";
    }
    // A value out of range put there in code (no reader) is refused by validate().
    if (std::holds_alternative<int64_t*>(f) && std::isfinite(k.rule.bounds.max)) {
      Config coded = defaults;
      *std::get<int64_t*>(k.field(coded)) = static_cast<int64_t>(k.rule.bounds.max) + 1;
      const std::string e = error_of([&] { coded.validate(); });
      EXPECT_NE(e.find("'" + k.rule.key + "'"), std::string::npos) << "validate(): '" << e << "'";
    }
  }
  // Nothing written that the table does not declare (the family's name aside).
  EXPECT_EQ(written.size(), keys_written + (written.contains("model") ? 1 : 0)) << written.dump();
  json unknown = written;
  unknown["colour"] = 3;
  EXPECT_NE(error_of([&] { read(unknown, "x/config.json"); }).find("'colour'"), std::string::npos);
}

TEST(ModelConfigKeys, EveryTransformerKey) {
  check_every_key<TransformerConfig>(
      transformer_config_keys(), TransformerConfig{.src_vocab = 40, .tgt_vocab = 40, .d_model = 8, .heads = 2, .d_ff = 16},
      transformer_config_to_json, transformer_config_from_json);
}

TEST(ModelConfigKeys, EveryRnnKey) {
  check_every_key<RnnConfig>(rnn_config_keys(), RnnConfig{.src_vocab = 40, .tgt_vocab = 40, .d_model = 8},
                             rnn_config_to_json, rnn_config_from_json);
}

TEST(ModelConfigKeys, EveryClassifierKey) {
  check_every_key<ClassifierConfig>(
      classifier_config_keys(), ClassifierConfig{.vocab = 100, .classes = 4, .pad_size = 16, .d_model = 8, .heads = 2, .d_ff = 16},
      classifier_config_to_json, classifier_config_from_json);
}

// attn train's model.* keys: each (but the run's own model.type and model.size) is a model table's
// key under the same rule (one range, one set of words, one help), so attn train cannot accept what
// config.json refuses or the other way round.
template <class Config>
bool same_rule(const KeyRule& run_rule, const std::vector<ConfigKey<Config>>& model_keys) {
  for (const ConfigKey<Config>& m : model_keys) {
    if ("model." + m.rule.key != run_rule.key) continue;
    EXPECT_EQ(run_rule.help, m.rule.help) << run_rule.key;
    EXPECT_EQ(run_rule.words, m.rule.words) << run_rule.key;
    EXPECT_EQ(run_rule.bounds.min, m.rule.bounds.min) << run_rule.key;
    EXPECT_EQ(run_rule.bounds.max, m.rule.bounds.max) << run_rule.key;
    EXPECT_EQ(run_rule.bounds.min_open, m.rule.bounds.min_open) << run_rule.key;
    EXPECT_EQ(run_rule.bounds.max_open, m.rule.bounds.max_open) << run_rule.key;
    return true;
  }
  return false;
}

TEST(ModelConfigKeys, TrainsModelKeysAreTheModelTables) {
  int translation = 0, classification = 0;
  for (const auto& k : translation_keys()) {
    if (k.rule.key.rfind("model.", 0) != 0 || k.rule.key == "model.type" || k.rule.key == "model.size") continue;
    ++translation;
    EXPECT_TRUE(same_rule(k.rule, transformer_config_keys()) || same_rule(k.rule, rnn_config_keys())) << k.rule.key;
  }
  for (const auto& k : classification_keys()) {
    if (k.rule.key.rfind("model.", 0) != 0) continue;
    ++classification;
    EXPECT_TRUE(same_rule(k.rule, classifier_config_keys())) << k.rule.key;
  }
  EXPECT_EQ(translation, 16);
  EXPECT_EQ(classification, 10);
  // The bounds that used to disagree: heads at most 1,024 for attn train, 65,536 in config.json.
  EXPECT_EQ(error_of([] { load_translation_run("", {"train.max_steps=10", "model.heads=2048", "model.d_model=4096"}); }), "")
      << "attn train accepts the heads config.json accepts";
}

}  // namespace
}  // namespace attn
