// A model's own defaults of the translation options (translate/model_defaults.h): read from
// config.json's "translate_defaults" with the options' own ranges and names, and given to every
// option a front end was not given (TranslateOptionsBuilder::defaults_from).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/translate/model_defaults.h"

namespace attn {
namespace {

std::string flag_of(const OptionField& f) { return f.flag; }

TranslateOptions imported() {
  const nlohmann::json config = {{"translate_defaults",
                                  {{"search_rules", "transformers"}, {"beam_size", 6}, {"length_penalty", 1.0},
                                   {"early_stopping", true}, {"renormalize_logits", true}, {"eos_at_max_len", true},
                                   {"max_decoding_length", 511}}}};
  return translate_defaults(config, "m/config.json");
}

TEST(ModelDefaults, AreReadAsTheOptionsTheyName) {
  const TranslateOptions d = imported();
  EXPECT_EQ(d.search.rules, SearchRules::transformers);
  EXPECT_EQ(d.search.beam, 6);
  EXPECT_EQ(d.search.length_penalty, 1.0);
  EXPECT_TRUE(d.search.early_stopping && d.search.renormalize && d.search.eos_at_max_len);
  EXPECT_EQ(d.search.max_len, 511);
  EXPECT_EQ(translate_defaults(nlohmann::json::object(), "x").search.beam, TranslateOptions{}.search.beam);
}

TEST(ModelDefaults, GivenOptionsWinAndTheRestAreTheModels) {
  TranslateOptionsBuilder b(flag_of);
  b.set(translate_option("beam_size"), "2");
  b.set(translate_option("max_len_a"), "1.5");  // a length per source keeps the default fixed length out
  b.defaults_from(imported());
  const TranslateOptions o = b.finish();
  EXPECT_EQ(o.search.beam, 2);
  EXPECT_EQ(o.search.rules, SearchRules::transformers);
  EXPECT_TRUE(o.search.renormalize);
  EXPECT_EQ(o.search.max_len, 0);
  EXPECT_EQ(o.search.max_len_a, 1.5);
  // sampling asked for: the model's beam gives way, as the option's own rule says
  TranslateOptionsBuilder s(flag_of);
  s.set(translate_option("sampling_topk"), "5");
  s.defaults_from(imported());
  EXPECT_EQ(s.finish().search.beam, 1);
}

TEST(ModelDefaults, BadEntriesNameTheFileAndTheKey) {
  auto message = [](const nlohmann::json& d) {
    try {
      translate_defaults(nlohmann::json{{"translate_defaults", d}}, "m/config.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"beam", 0}}).find("m/config.json: translate_defaults.beam"), std::string::npos);
  EXPECT_NE(message({{"beam_size", 0}}).find("translate_defaults.beam_size"), std::string::npos);
  EXPECT_NE(message({{"beam_size", "four"}}).find("whole number"), std::string::npos);
  EXPECT_NE(message({{"no_such", 1}}).find("not a translation option"), std::string::npos);
  EXPECT_NE(message({{"sampling_topk", 5}}).find("the caller's"), std::string::npos);
  EXPECT_NE(message({{"search_rules", "marian"}}).find("search_rules"), std::string::npos);
  EXPECT_NE(message(nlohmann::json::array()).find("must be an object"), std::string::npos);
}

TEST(ModelDefaults, EarlyStoppingIsARuleOfTransformersSearch) {
  TranslateOptionsBuilder b(flag_of);
  b.set_flag(translate_option("early_stopping"), true);
  EXPECT_THROW(b.finish(), Error);
  b.set(translate_option("search_rules"), "transformers");
  EXPECT_TRUE(b.finish().search.early_stopping);
}

}  // namespace
}  // namespace attn
