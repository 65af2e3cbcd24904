// attn import's refusals name the file and the key (issue 51): an activation attn lacks, encoder
// and decoder shapes attn's one config cannot hold, a weights file it does not read, a missing
// tensor. The successful import is checked against transformers itself in hf_marian_test.py.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "../io/io_test_util.h"
#include "attn/models/hf_marian.h"

namespace attn {
namespace {

using io::testing::expect_error;

nlohmann::json marian() {
  return {{"model_type", "marian"},    {"d_model", 8},          {"encoder_layers", 1},
          {"decoder_layers", 1},       {"encoder_attention_heads", 2}, {"decoder_attention_heads", 2},
          {"encoder_ffn_dim", 16},     {"decoder_ffn_dim", 16}, {"vocab_size", 10},
          {"max_position_embeddings", 32}, {"pad_token_id", 9}, {"eos_token_id", 0},
          {"decoder_start_token_id", 9}, {"activation_function", "swish"}, {"scale_embedding", true}};
}

TEST(HfMarian, ConfigIsReadAsAttnOptions) {
  const TransformerConfig c = hf_marian_config(marian(), "m/config.json");
  EXPECT_EQ(c.positions, Positions::sinusoidal_halves);
  EXPECT_FALSE(c.final_norm);
  EXPECT_TRUE(c.scale_embeddings);
  EXPECT_EQ(c.activation, Activation::swish);
  EXPECT_EQ(c.bos_id, 9);
  EXPECT_EQ(c.eos_id, 0);
  EXPECT_TRUE(c.share_embeddings);
}

TEST(HfMarian, UnsupportedValuesNameTheFileAndTheKey) {
  nlohmann::json j = marian();
  j["activation_function"] = "tanh";
  expect_error([&] { hf_marian_config(j, "m/config.json"); }, {"m/config.json", "activation_function", "tanh"});
  j = marian();
  j["decoder_ffn_dim"] = 32;
  expect_error([&] { hf_marian_config(j, "m/config.json"); }, {"m/config.json", "encoder_ffn_dim", "decoder_ffn_dim"});
  j = marian();
  j["model_type"] = "bart";
  expect_error([&] { hf_marian_config(j, "m/config.json"); }, {"m/config.json", "model_type", "bart"});
  j = marian();
  j["d_model"] = "eight";
  expect_error([&] { hf_marian_config(j, "m/config.json"); }, {"m/config.json", "d_model"});
}

TEST(HfMarian, MissingTensorsAreNamed) {
  const TransformerConfig c = hf_marian_config(marian(), "m/config.json");
  std::map<std::string, Tensor> hf;
  hf["model.shared.weight"] = Tensor::zeros({10, 8});
  expect_error([&] { hf_marian_tensors(c, hf, "m/model.safetensors"); }, {"m/model.safetensors", "final_logits_bias"});
  hf["final_logits_bias"] = Tensor::zeros({1, 10});
  expect_error([&] { hf_marian_tensors(c, hf, "m/model.safetensors"); },
               {"m/model.safetensors", "model.encoder.layers.0.self_attn.q_proj.weight"});
}

TEST(HfMarian, PytorchBinIsRefusedWithWhatToDo) {
  io::testing::TempDir dir;
  io::testing::write_plain(dir.file("config.json"), marian().dump());
  io::testing::write_plain(dir.file("pytorch_model.bin"), "not read");
  expect_error([&] { import_hf_marian(dir.path.string()); }, {"pytorch_model.bin", "safe_serialization=True"});
}

}  // namespace
}  // namespace attn
