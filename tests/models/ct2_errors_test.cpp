// A CTranslate2 spec read as attn's TransformerConfig (models/ct2.h), and its refusals: every spec
// option attn does not compute is named with the file and the variable. The successful import is
// checked against ctranslate2 itself in ct2_test.py.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../io/io_test_util.h"
#include "attn/models/ct2.h"

namespace attn {
namespace {

using io::Ct2DType;
using io::Ct2ModelBin;
using io::ct2_from_float;
using io::ct2_scalar;
using io::testing::expect_error;

// A post-norm spec of d_model 8, 2 heads, 1 + 1 layers, vocabulary 10, as the Marian converter
// writes it: shared embeddings (an alias), the output tied to them, a stored position table.
Ct2ModelBin spec() {
  Ct2ModelBin m;
  m.source = "m/model.bin";
  m.variables["encoder/embeddings/weight"] = ct2_from_float(Tensor::zeros({10, 8}));
  m.aliases["decoder/embeddings/weight"] = "encoder/embeddings/weight";
  m.aliases["decoder/projection/weight"] = "encoder/embeddings/weight";
  m.variables["encoder/position_encodings/encodings"] = ct2_from_float(Tensor::zeros({32, 8}));
  m.aliases["decoder/position_encodings/encodings"] = "encoder/position_encodings/encodings";
  m.variables["encoder/layer_0/ffn/linear_0/weight"] = ct2_from_float(Tensor::zeros({16, 8}));
  m.variables["decoder/layer_0/ffn/linear_0/weight"] = ct2_from_float(Tensor::zeros({16, 8}));
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string s = stack;
    m.variables[s + "/num_heads"] = ct2_scalar(2, Ct2DType::i8);
    m.variables[s + "/pre_norm"] = ct2_scalar(0, Ct2DType::i8);
    m.variables[s + "/activation"] = ct2_scalar(2, Ct2DType::i8);
    m.variables[s + "/scale_embeddings"] = ct2_scalar(1, Ct2DType::i8);
  }
  return m;
}

TransformerConfig config(const Ct2ModelBin& m) { return ct2_config(m, nlohmann::json::object(), "m"); }

TEST(Ct2Config, TheSpecIsReadAsAttnOptions) {
  const TransformerConfig c = config(spec());
  EXPECT_EQ(c.d_model, 8);
  EXPECT_EQ(c.heads, 2);
  EXPECT_EQ(c.d_ff, 16);
  EXPECT_EQ(c.encoder_layers, 1);
  EXPECT_EQ(c.decoder_layers, 1);
  EXPECT_EQ(c.src_vocab, 11);  // + the padding id attn adds
  EXPECT_EQ(c.pad_id, 10);
  EXPECT_EQ(c.max_len, 32);
  EXPECT_FALSE(c.norm_first);
  EXPECT_FALSE(c.final_norm);
  EXPECT_TRUE(c.scale_embeddings);
  EXPECT_TRUE(c.share_embeddings);
  EXPECT_TRUE(c.tie_output);
  EXPECT_EQ(c.activation, Activation::swish);
  EXPECT_EQ(c.positions, Positions::learned);
  // without a stored table: CTranslate2's computed sinusoid, 1024 positions
  Ct2ModelBin m = spec();
  m.variables.erase("encoder/position_encodings/encodings");
  m.aliases.erase("decoder/position_encodings/encodings");
  EXPECT_EQ(config(m).max_len, 1024);
  // a float scale equal to sqrt(d_model) is scaling; 1.0 is none
  m.variables["encoder/scale_embeddings"] = m.variables["decoder/scale_embeddings"] = ct2_scalar(1.0, Ct2DType::f32);
  EXPECT_FALSE(config(m).scale_embeddings);
}

TEST(Ct2Config, WhatAttnDoesNotComputeIsNamed) {
  Ct2ModelBin m = spec();
  m.spec = "TransformerDecoderModelSpec";
  expect_error([&] { config(m); }, {"m/model.bin", "TransformerDecoderModelSpec"});
  m = spec();
  m.variables["decoder/alibi"] = ct2_scalar(1, Ct2DType::i8);
  expect_error([&] { config(m); }, {"m/model.bin", "decoder/alibi"});
  m = spec();
  m.variables["encoder/layer_0/self_attention/relative_position_keys"] = ct2_from_float(Tensor::zeros({3, 4}));
  expect_error([&] { config(m); }, {"m/model.bin", "relative_position_keys"});
  m = spec();
  m.variables["encoder/activation"] = m.variables["decoder/activation"] = ct2_scalar(1, Ct2DType::i8);
  expect_error([&] { config(m); }, {"m/model.bin", "encoder/activation", "GELU tanh"});
  m = spec();
  m.variables["decoder/num_heads"] = ct2_scalar(4, Ct2DType::i8);
  expect_error([&] { config(m); }, {"m/model.bin", "encoder/num_heads", "decoder/num_heads"});
  m = spec();
  m.variables["encoder/scale_embeddings"] = m.variables["decoder/scale_embeddings"] = ct2_scalar(2.0, Ct2DType::f32);
  expect_error([&] { config(m); }, {"m/model.bin", "scale_embeddings", "sqrt(d_model)"});
  m = spec();
  m.variables["encoder/layer_norm/gamma"] = ct2_from_float(Tensor::zeros({8}));
  expect_error([&] { config(m); }, {"m/model.bin", "final layer_norm in one stack"});
  m = spec();
  m.variables["encoder/embeddings_1/weight"] = ct2_from_float(Tensor::zeros({5, 8}));
  expect_error([&] { config(m); }, {"m/model.bin", "embeddings_1", "source features"});
  m = spec();
  m.variables["decoder/layer_0/ffn/linear_0/weight"] = ct2_from_float(Tensor::zeros({16, 8}));
  m.variables["decoder/layer_2/ffn/linear_0/weight"] = ct2_from_float(Tensor::zeros({16, 8}));
  expect_error([&] { config(m); }, {"m/model.bin", "decoder layers are not layer_0"});
  m = spec();
  m.variables["decoder/position_encodings/encodings"] = ct2_from_float(Tensor::zeros({16, 8}));
  m.aliases.erase("decoder/position_encodings/encodings");
  expect_error([&] { config(m); }, {"m/model.bin", "position_encodings differ"});
  m = spec();
  m.variables.erase("encoder/layer_0/ffn/linear_0/weight");
  expect_error([&] { config(m); }, {"m/model.bin", "no \"encoder/layer_N/...\" variable"});
  m.variables["encoder/layer_0/self_attention/linear_0/weight"] = ct2_from_float(Tensor::zeros({24, 8}));
  expect_error([&] { config(m); }, {"m/model.bin", "no variable \"encoder/layer_0/ffn/linear_0/weight\""});
  expect_error([&] { ct2_config(spec(), nlohmann::json{{"layer_norm_epsilon", 1e-6}}, "m"); },
               {"m/config.json", "layer_norm_epsilon"});
}

}  // namespace
}  // namespace attn
