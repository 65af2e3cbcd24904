// `attn average` and `attn export-torch` / `import-torch` on RNN encoder-decoder models
// (`model: rnn`), through the binary: the average of two checkpoints is their element-wise mean;
// export-torch writes tests/rnn/torch_rnn.py's config and state_dict names (tied keys included);
// import -> export is bit-exact.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "attn/io/npz.h"
#include "attn/io/safetensors.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "rnn_test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Runs the attn binary; returns its exit code (stderr goes to `dir`/stderr.txt and is printed on failure).
int run_attn(const std::string& arguments, const fs::path& dir) {
  std::string err = (dir / "stderr.txt").string();
  std::string cmd = std::string(ATTN_BINARY) + " " + arguments + " 2>" + quote(err);
  int status = std::system(cmd.c_str());
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    std::FILE* f = std::fopen(err.c_str(), "r");
    std::array<char, 4096> buf{};
    size_t n = f ? std::fread(buf.data(), 1, buf.size() - 1, f) : 0;
    if (f) std::fclose(f);
    ADD_FAILURE() << cmd << " exited " << code << ": " << std::string(buf.data(), n);
  }
  return code;
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The fixture model (torch_rnn.py's parameters) and its config.json path.
RnnSeq2Seq fixture_model(const std::string& name) {
  auto t = testing::load_rnn_fixture("seq2seq_" + name);
  std::string json_path = std::string(ATTN_TEST_DATA) + "/rnn/seq2seq_" + name + ".json";
  RnnConfig c = rnn_config_from_json(read_json_file(json_path), json_path);
  std::map<std::string, Tensor> params;
  for (const auto& [k, v] : t)
    if (k.rfind("grad.", 0) != 0 && k != "src" && k != "tgt_in" && k != "tgt_out" && k != "logits" &&
        k != "loss" && k != "logits_free")
      params[k] = v;
  return rnn_seq2seq_from_tensors(c, params, json_path);
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != DType::f32 || b.dtype() != DType::f32) return false;
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data<float>(), y.data<float>(), sizeof(float) * x.numel()) == 0;
}

// Writes root/checkpoints/step-N/{model.safetensors, state.json} as the trainer does (a checkpoint
// is complete when state.json exists).
void write_checkpoint(const fs::path& root, int step, const std::map<std::string, Tensor>& tensors) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08d", step);
  fs::path d = root / "checkpoints" / name;
  fs::create_directories(d);
  io::save_safetensors((d / "model.safetensors").string(), tensors, {{"format", "pt"}});
  std::FILE* f = std::fopen((d / "state.json").c_str(), "w");
  std::fprintf(f, "{\"step\": %d}\n", step);
  std::fclose(f);
}

TEST(RnnCli, AverageOfTwoCheckpointsIsTheElementwiseMean) {
  fs::path dir = fresh_dir("attn_rnn_average");
  RnnSeq2Seq m = fixture_model("lstm_bridge_bilinear");
  save_seq2seq(as_seq2seq(m), dir.string());
  // Three checkpoints: a (older, not averaged with --last 2), b and c = b scaled and shifted.
  std::map<std::string, Tensor> a, b, c;
  for (const auto& [key, v] : m.parameters()) {
    Tensor x = v.value().contiguous();
    Tensor tb = Tensor::empty(x.shape()), tc = Tensor::empty(x.shape()), ta = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      float base = x.data<float>()[i];
      ta.data<float>()[i] = 100.0f;
      tb.data<float>()[i] = base;
      tc.data<float>()[i] = 0.5f - 3.0f * base + 0.001f * static_cast<float>(i % 7);
    }
    a[key] = ta;
    b[key] = tb;
    c[key] = tc;
  }
  write_checkpoint(dir, 10, a);
  write_checkpoint(dir, 20, b);
  write_checkpoint(dir, 30, c);
  fs::path out = dir / "avg";
  ASSERT_EQ(run_attn("average " + quote(dir.string()) + " --last 2 --out " + quote(out.string()), dir), 0);
  Seq2Seq avg = load_seq2seq(out.string());
  ASSERT_EQ(avg.kind(), ModelKind::rnn);
  EXPECT_EQ(avg.common().score, ScoreKind::bilinear);
  double worst = 0;
  size_t n = 0;
  for (const auto& [key, v] : avg.parameters()) {
    Tensor got = v.value().contiguous();
    ASSERT_TRUE(b.count(key)) << key;
    for (int64_t i = 0; i < got.numel(); ++i) {
      // the mean in double, rounded once to float (as average_checkpoints sums)
      double want = (static_cast<double>(b[key].data<float>()[i]) + c[key].data<float>()[i]) / 2.0;
      worst = std::max(worst, std::fabs(got.data<float>()[i] - static_cast<double>(static_cast<float>(want))));
    }
    ++n;
  }
  EXPECT_EQ(n, b.size());
  std::printf("[rnn average] %zu tensors, max |avg - (b + c)/2| %.2e (tolerance 0: same rounding)\n", n, worst);
  EXPECT_EQ(worst, 0.0);
  fs::remove_all(dir);
}

// torch_rnn.py's state_dict keys of the fixture configs (RnnSeq2Seq(c).state_dict().keys()).
std::set<std::string> torch_state_dict_keys(bool bridge) {
  std::set<std::string> k{"src_embed.weight", "tgt_embed.weight", "attention.W", "readout.weight",
                          "readout.bias", "generator.weight", "generator.bias"};
  for (std::string part : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
    for (std::string l : {"0", "1"}) {
      k.insert("encoder." + part + "_l" + l);
      k.insert("encoder." + part + "_l" + l + "_reverse");
      k.insert("decoder." + part + "_l" + l);
    }
  if (bridge)
    for (std::string s : {"bridge_h.weight", "bridge_h.bias", "bridge_c.weight", "bridge_c.bias"}) k.insert(s);
  else
    for (std::string s : {"attention.v", "attention.U.weight", "attention.U.bias"}) k.insert(s);
  return k;
}

void check_export(const std::string& name, bool bridge) {
  fs::path dir = fresh_dir("attn_rnn_export_" + name);
  RnnSeq2Seq m = fixture_model(name);
  fs::path model = dir / "model", ref = dir / "ref", back = dir / "back", ref2 = dir / "ref2";
  save_seq2seq(as_seq2seq(m), model.string());
  ASSERT_EQ(run_attn("export-torch " + quote(model.string()) + " " + quote(ref.string()), dir), 0);

  // The config torch_rnn.py's RnnSeq2Seq(c) was built from, key for key.
  std::string fixture_json = std::string(ATTN_TEST_DATA) + "/rnn/seq2seq_" + name + ".json";
  EXPECT_EQ(read_json_file((ref / "config.json").string()), read_json_file(fixture_json));

  // The state_dict: every key, tied ones included, bit-equal to the model's tensors.
  auto npz = io::load_npz((ref / "weights.npz").string());
  std::set<std::string> keys;
  for (const auto& [k, v] : npz) keys.insert(k);
  EXPECT_EQ(keys, torch_state_dict_keys(bridge));
  for (const auto& [k, v] : m.named) EXPECT_TRUE(npz.count(k) && bit_equal(npz[k], v.value())) << k;

  // import -> export is bit-exact, and the imported model's weights equal the original's.
  ASSERT_EQ(run_attn("import-torch " + quote(ref.string()) + " " + quote(back.string()), dir), 0);
  Seq2Seq imported = load_seq2seq(back.string());
  ASSERT_EQ(imported.kind(), ModelKind::rnn);
  for (const auto& [k, v] : m.parameters())
    EXPECT_TRUE(bit_equal(std::get<RnnSeq2Seq>(imported.net).named.at(k).value(), v.value())) << k;
  ASSERT_EQ(run_attn("export-torch " + quote(back.string()) + " " + quote(ref2.string()), dir), 0);
  auto npz2 = io::load_npz((ref2 / "weights.npz").string());
  ASSERT_EQ(npz2.size(), npz.size());
  size_t same = 0;
  for (const auto& [k, v] : npz) same += npz2.count(k) && bit_equal(npz2[k], v);
  std::printf("[rnn export-torch] %s: %zu state_dict tensors, %zu bit-identical after import -> export\n",
              name.c_str(), npz.size(), same);
  EXPECT_EQ(same, npz.size());
  fs::remove_all(dir);
}

TEST(RnnCli, ExportTorchWritesTorchRnnNamesAndRoundTrips) {
  check_export("lstm_additive", false);
  check_export("lstm_bridge_bilinear", true);
}

}  // namespace
}  // namespace attn
