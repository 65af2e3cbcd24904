// The model directory: import/export with torch_ref.py's layout bit for bit, save/load, and
// malformed directories failing with messages that name the file and the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/model_dir.h"
#include "attn/models/named_tensors.h"
#include "attn/models/transformer.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
const std::string kRef = std::string(ATTN_TEST_DATA) + "/transformer/";

std::string temp_dir(const std::string& name) {
  std::string d = (fs::temp_directory_path() / ("attn_test_" + name + "_" + std::to_string(::getpid()))).string();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.contiguous().raw_data(), b.contiguous().raw_data(), a.nbytes()) == 0;
}

TEST(ModelDir, ImportExportRoundTripIsBitExact) {
  for (const char* config : {"post_shared_l2_h4", "pre_unshared_l1_h1"}) {
    std::string d = temp_dir("roundtrip");
    Transformer m = import_torch(kRef + config);
    save_transformer(m, d + "/model");
    Transformer loaded = load_transformer(d + "/model");
    export_torch(loaded, d + "/ref");
    auto original = io::load_npz(kRef + config + "/weights.npz");
    auto exported = io::load_npz(d + "/ref/weights.npz");
    ASSERT_EQ(original.size(), exported.size()) << config;
    for (const auto& [key, t] : original) {
      ASSERT_TRUE(exported.count(key)) << key;
      EXPECT_TRUE(same_bits(t, exported[key])) << config << ": " << key << " changed";
    }
    fs::remove_all(d);
  }
}

// A loader's map passed as a temporary gives the model its tensors without a copy; a map the
// caller keeps is copied, so that training's in-place updates never reach the caller's tensors.
TEST(ModelDir, ParametersAdoptedOnlyFromMapsNobodyElseHolds) {
  const std::string weights = kRef + "pre_unshared_l1_h1/weights.npz";
  const TransformerConfig c = import_torch(kRef + "pre_unshared_l1_h1").config;
  std::map<std::string, Tensor> kept = io::load_npz(weights);
  const void* kept_data = kept.at("src_embed.weight").raw_data();
  Transformer from_kept = transformer_from_tensors(c, kept, weights);
  EXPECT_NE(from_kept.named.at("src_embed.weight").value().raw_data(), kept_data);
  from_kept.named.at("src_embed.weight").value().data<float>()[0] += 1.0f;
  EXPECT_TRUE(same_bits(kept.at("src_embed.weight"), io::load_npz(weights).at("src_embed.weight")));

  std::map<std::string, Tensor> given = io::load_npz(weights);
  const void* given_data = given.at("src_embed.weight").raw_data();
  Transformer from_given = transformer_from_tensors(c, std::move(given), weights);
  EXPECT_EQ(from_given.named.at("src_embed.weight").value().raw_data(), given_data);

  // a view into a larger storage, or a borrowed mapping, is copied
  Tensor whole = Tensor::zeros({4, 6});
  EXPECT_NE(adopt_or_copy(whole.slice(0, 1, 3)).raw_data(), whole.slice(0, 1, 3).raw_data());
  Tensor alone = Tensor::zeros({4, 6});
  const void* alone_data = alone.raw_data();
  EXPECT_EQ(adopt_or_copy(std::move(alone)).raw_data(), alone_data);
}

// A NaN or an infinity in any weight (a diverged run, a corrupt file) is refused at load, naming
// the tensor: such a model translates every sentence to nothing.
TEST(ModelDir, NonFiniteWeightsAreRefused) {
  const std::string weights = kRef + "pre_unshared_l1_h1/weights.npz";
  const TransformerConfig c = import_torch(kRef + "pre_unshared_l1_h1").config;
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    std::map<std::string, Tensor> t = io::load_npz(weights);
    t.at("transformer.decoder.layers.0.linear1.weight").data<float>()[3] = bad;
    try {
      transformer_from_tensors(c, std::move(t), weights);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("transformer.decoder.layers.0.linear1.weight"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("index 3"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(first_non_finite(Tensor::zeros({3})), -1);
}

TEST(ModelDir, SafetensorsHoldsTiedWeightsOnce) {
  std::string d = temp_dir("tied");
  Transformer m = import_torch(kRef + "post_shared_l2_h4");
  save_transformer(m, d);
  auto t = io::load_safetensors(d + "/model.safetensors");
  EXPECT_TRUE(t.count("src_embed.weight"));
  EXPECT_FALSE(t.count("tgt_embed.weight"));
  EXPECT_FALSE(t.count("generator.weight"));
  fs::remove_all(d);
}

// Expects load_transformer(dir) to throw an Error whose message contains every one of `parts`.
void expect_load_error(const std::string& dir, std::vector<std::string> parts) {
  try {
    load_transformer(dir);
    ADD_FAILURE() << "loading " << dir << " should fail";
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << msg << "' lacks '" << p << "'";
  }
}

TEST(ModelDir, MalformedDirectoriesNameTheFileAndTensor) {
  std::string d = temp_dir("bad");
  Transformer m = import_torch(kRef + "pre_unshared_l1_h1");
  save_transformer(m, d);
  std::string st = d + "/model.safetensors", cfg = d + "/config.json";
  std::string weights = io::read_file(st), config = io::read_file(cfg);

  fs::remove(st);  // missing file
  expect_load_error(d, {"model.safetensors", "no such file"});

  io::write_file_atomic(st, weights.substr(0, weights.size() / 2));  // truncated
  expect_load_error(d, {"model.safetensors"});

  // A wrong shape: the config says d_ff 64; claim 80 so linear1.weight no longer fits.
  io::write_file_atomic(st, weights);
  io::write_file_atomic(cfg, std::string(config).replace(config.find("\"d_ff\": 64"), 10, "\"d_ff\": 80"));
  expect_load_error(d, {"model.safetensors", "linear1.weight", "shape"});

  // A missing tensor and an unknown dtype.
  io::write_file_atomic(cfg, config);
  auto tensors = io::load_safetensors(st);
  std::map<std::string, Tensor> fewer(tensors.begin(), tensors.end());
  fewer.erase("transformer.decoder.norm.bias");
  io::save_safetensors(st, fewer);
  expect_load_error(d, {"model.safetensors", "transformer.decoder.norm.bias", "missing"});
  std::string bad = weights;
  size_t at = bad.find("\"F32\"");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 5, "\"F99\"");
  io::write_file_atomic(st, bad);
  expect_load_error(d, {"model.safetensors", "F99"});

  // A config with an unknown key and one with a bad value.
  io::write_file_atomic(st, weights);
  io::write_file_atomic(cfg, "{\"d_model\": 32, \"colour\": 3}");
  expect_load_error(d, {"config.json", "colour"});
  io::write_file_atomic(cfg, "{\"d_model\": 30, \"heads\": 4}");
  expect_load_error(d, {"config.json", "d_model"});
  io::write_file_atomic(cfg, "{not json");
  expect_load_error(d, {"config.json", "JSON"});
  fs::remove_all(d);
}

}  // namespace
}  // namespace attn
