// config.json of each model family: numbers read into their real type with range checks (no
// wrap-around, no truncation, nothing allocated for an impossible size), each family holding only
// its own keys, and the family picked by "model" once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/models/classifier.h"
#include "attn/models/seq2seq.h"

namespace attn {
namespace {

using nlohmann::json;

// The error `read` throws for config.json with key = value, or "" when it is accepted.
template <class Read>
std::string error_of(Read read, const std::string& key, const json& value) {
  json j = {{"src_vocab", 40}, {"tgt_vocab", 40}, {"d_model", 8}, {"heads", 2}, {"d_ff", 16}};
  j[key] = value;
  try {
    read(j);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

std::string transformer_error(const std::string& key, const json& value) {
  return error_of([](const json& j) { transformer_config_from_json(j, "m/config.json"); }, key, value);
}

TEST(ConfigJson, NumbersAreCheckedNotWrapped) {
  struct Case {
    const char* key;
    json value;
  };
  const Case bad[] = {
      {"max_len", 1e18},                        // was a SIGSEGV: the position table's byte count overflowed
      {"max_len", json(1000000000000000000LL)},  // the same as an integer
      {"encoder_layers", json(4294967296LL)},   // was 6 GB and a bare bad_alloc
      {"d_model", 32.7},                        // was truncated to 32
      {"heads", 2.5},                           // was truncated to 2
      {"eos_id", json(4294967298LL)},           // wrapped to 2
      {"pad_id", -1},
      {"dropout", 1.5},
      {"dropout", "0.1"},
      {"share_embeddings", 1},
      {"src_vocab", json(18446744073709551615ULL)},
  };
  for (const Case& c : bad) {
    std::string e = transformer_error(c.key, c.value);
    EXPECT_NE(e.find("m/config.json"), std::string::npos) << c.key << " = " << c.value.dump() << ": " << e;
    EXPECT_NE(e.find(c.key), std::string::npos) << c.key << " = " << c.value.dump() << ": " << e;
  }
  EXPECT_EQ(transformer_error("max_len", 4096), "");
  EXPECT_EQ(transformer_error("dropout", 0), "") << "an integer is a number";
}

TEST(ConfigJson, AModelLargerThanMemoryIsRefusedBeforeAllocating) {
  json j = {{"src_vocab", 4000000}, {"tgt_vocab", 4000000}, {"d_model", 65536}, {"heads", 1}, {"d_ff", 16}};
  try {
    transformer_config_from_json(j, "big/config.json");
    FAIL() << "a model of 2.6e11 parameters was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("memory"), std::string::npos) << e.what();
  }
}

TEST(ConfigJson, EachFamilyHoldsOnlyItsOwnKeys) {
  json rnn = {{"model", "rnn"}, {"src_vocab", 40}, {"tgt_vocab", 40}, {"d_model", 8}, {"rnn_cell", "gru"}};
  Seq2SeqConfig c = seq2seq_config_from_json(rnn, "r/config.json");
  ASSERT_EQ(kind_of(c), ModelKind::rnn);
  EXPECT_EQ(std::get<RnnConfig>(c).cell, RnnCell::gru);
  EXPECT_EQ(std::get<RnnConfig>(c).score, ScoreKind::additive) << "Bahdanau's score unless given";
  rnn["heads"] = 2;
  EXPECT_THROW(seq2seq_config_from_json(rnn, "r/config.json"), Error) << "a Transformer key in an RNN config";
  EXPECT_NE(transformer_error("rnn_cell", "lstm").find("rnn_cell"), std::string::npos)
      << "an RNN key in a Transformer config";
  EXPECT_NE(transformer_error("model", "rnn").find("rnn"), std::string::npos);
  // Both round-trip through JSON.
  EXPECT_EQ(seq2seq_config_to_json(seq2seq_config_from_json(seq2seq_config_to_json(c), "x")),
            seq2seq_config_to_json(c));
  Seq2SeqConfig t = TransformerConfig{.d_model = 16, .heads = 4};
  EXPECT_EQ(kind_of(seq2seq_config_from_json(seq2seq_config_to_json(t), "x")), ModelKind::transformer);
}

TEST(ConfigJson, ClassifierNumbersAndNames) {
  json j = {{"vocab", 100}, {"classes", 4}, {"pad_size", 16}, {"d_model", 8}, {"heads", 2}, {"d_ff", 16}};
  ClassifierConfig c = classifier_config_from_json(j, "c/config.json");
  EXPECT_EQ(c.pooling, Pooling::flatten);
  j["pooling"] = "cls";
  j["head_split"] = "seed";
  c = classifier_config_from_json(j, "c/config.json");
  EXPECT_EQ(c.pooling, Pooling::cls);
  EXPECT_EQ(c.head_split, HeadSplit::seed);
  EXPECT_EQ(classifier_config_from_json(classifier_config_to_json(c), "x").pooling, Pooling::cls);
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"pad_size", json(4294967297LL)}, {"layers", 2.5}, {"pooling", "max"}, {"classes", 1}}) {
    json bad = j;
    bad[key] = value;
    try {
      classifier_config_from_json(bad, "c/config.json");
      ADD_FAILURE() << key << " = " << value.dump() << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace attn
