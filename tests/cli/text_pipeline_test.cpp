// The text path end to end through the binary, on 400 lines of the shared mt-ende data:
// `attn train --config FILE` (a YAML recipe: tokenizer, model and checkpoints as the file says),
// `translate` and `score` in text mode (SentencePiece in and out) against the same commands in
// --ids mode on the tokenizer's own ids, and `average` of the run's Transformer checkpoints
// against their element-wise mean.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/tokenizer.h"
#include "attn/io/safetensors.h"
#include "attn/train/checkpoint.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string quote(const std::string& s) { return "'" + s + "'"; }

struct CliResult {
  int code;
  std::string out, err;
};

CliResult attn(const std::string& arguments, const fs::path& dir) {
  const std::string err = (dir / "stderr.txt").string();
  FILE* pipe = popen((std::string(ATTN_BINARY) + " " + arguments + " 2>" + quote(err)).c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  int status = pclose(pipe);
  std::ifstream e(err);
  std::stringstream s;
  s << e.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, s.str()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// The first n lines of a shared data file, joined.
std::string head(const std::string& file, int n) {
  std::ifstream in(std::string(ATTN_SHARED_DIR) + "/data/mt-ende/" + file);
  std::string out;
  std::string line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

class TextPipeline : public ::testing::Test {
 protected:
  static fs::path dir() {
    static const fs::path d = fs::temp_directory_path() / ("attn_text_pipeline_" + std::to_string(getpid()));
    return d;
  }
  static fs::path model() { return dir() / "model"; }
  static void SetUpTestSuite() {
    fs::remove_all(dir());
    fs::create_directories(dir());
    write(dir() / "train.en", head("train.en", 400));
    write(dir() / "train.de", head("train.de", 400));
    write(dir() / "recipe.yaml",
          "model_dir: " + model().string() + "\n"
          "data:\n  train_src: " + (dir() / "train.en").string() + "\n  train_tgt: " + (dir() / "train.de").string() +
          "\n  valid_src: \"\"\n  valid_tgt: \"\"\n  vocab_size: 300\n"
          "model:\n  d_model: 32\n  heads: 2\n  encoder_layers: 1\n  decoder_layers: 1\n  d_ff: 48\n  max_len: 256\n"
          "train:\n  max_steps: 30\n  checkpoint_every: 10\n  keep_checkpoints: 0\n  max_tokens: 600\n"
          "  threads: 2\n  seed: 3\n  lr: 0.002\n  schedule: constant\n");
    CliResult r = attn("train --config " + quote((dir() / "recipe.yaml").string()), dir());
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir()); }
};

TEST_F(TextPipeline, TrainReadsTheConfigFile) {
  std::ifstream in(model() / "config.json");
  ASSERT_TRUE(in.good());
  nlohmann::json c = nlohmann::json::parse(in);
  EXPECT_EQ(c["d_model"], 32);
  EXPECT_EQ(c["heads"], 2);
  EXPECT_EQ(c["encoder_layers"], 1);
  EXPECT_EQ(c["d_ff"], 48);
  EXPECT_EQ(c["max_len"], 256);
  ASSERT_TRUE(c.contains("tokenizer"));
  data::Tokenizer tok = data::Tokenizer::load((model() / c["tokenizer"].get<std::string>()).string());
  EXPECT_EQ(tok.vocab_size(), 300);
  EXPECT_EQ(list_checkpoints(model().string()).size(), 3u);  // steps 10, 20, 30
}

// Text in, text out: the same translations as --ids on the tokenizer's ids, decoded.
TEST_F(TextPipeline, TextTranslateAndScoreEqualTheIdsPath) {
  const std::string src_text = head("dev.en", 12), tgt_text = head("dev.de", 12);
  write(dir() / "dev.en", src_text);
  write(dir() / "dev.de", tgt_text);
  data::Tokenizer tok = data::Tokenizer::load((model() / "spm.model").string());
  std::string src_ids, tgt_ids;
  for (const std::string& l : lines_of(src_text)) {
    for (int32_t id : tok.encode(l)) src_ids += std::to_string(id) + " ";
    src_ids += std::to_string(data::kEosId) + "\n";
  }
  for (const std::string& l : lines_of(tgt_text)) {
    std::vector<int32_t> v = tok.encode(l);
    for (size_t k = 0; k < v.size(); ++k) {
      if (k > 0) tgt_ids += ' ';
      tgt_ids += std::to_string(v[k]);
    }
    tgt_ids += '\n';
  }
  write(dir() / "dev.en.ids", src_ids);
  write(dir() / "dev.de.ids", tgt_ids);
  const std::string m = "--model " + quote(model().string()) + " --threads 1 ";

  CliResult text = attn("translate " + m + "--beam 2 --max-len 30 < " + quote((dir() / "dev.en").string()), dir());
  CliResult ids = attn("translate " + m + "--ids --beam 2 --max-len 30 < " + quote((dir() / "dev.en.ids").string()), dir());
  ASSERT_EQ(text.code, 0) << text.err;
  ASSERT_EQ(ids.code, 0) << ids.err;
  std::vector<std::string> got = lines_of(text.out), id_lines = lines_of(ids.out);
  ASSERT_EQ(got.size(), 12u);
  ASSERT_EQ(id_lines.size(), 12u);
  int nonempty = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    std::vector<int32_t> v;
    std::istringstream s(id_lines[i]);
    for (int32_t x; s >> x;) v.push_back(x);
    EXPECT_EQ(got[i], tok.decode(v)) << "line " << i + 1;
    nonempty += !got[i].empty();
  }
  EXPECT_GT(nonempty, 0) << "every translation is empty";

  CliResult score_text = attn("score " + m + "--src " + quote((dir() / "dev.en").string()) + " --tgt " +
                            quote((dir() / "dev.de").string()), dir());
  CliResult score_ids = attn("score " + m + "--ids --src " + quote((dir() / "dev.en.ids").string()) + " --tgt " +
                           quote((dir() / "dev.de.ids").string()), dir());
  ASSERT_EQ(score_text.code, 0) << score_text.err;
  ASSERT_EQ(score_ids.code, 0) << score_ids.err;
  std::vector<std::string> a = lines_of(score_text.out), b = lines_of(score_ids.out);
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(b.size(), 12u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i], b[i]) << "line " << i + 1;
    EXPECT_LT(std::stod(a[i]), 0.0) << "a log-probability";
  }
}

// --prefix in text mode goes through the tokenizer: the same outputs as --ids fed the prefix's ids.
// An ensemble of the model with itself (weights 0.5, 0.5: the same log-probs) is the model, in
// translate and in score.
TEST_F(TextPipeline, TextPrefixAndEnsemble) {
  const std::string src_text = head("dev.en", 8), tgt_text = head("dev.de", 8);
  write(dir() / "p.en", src_text);
  data::Tokenizer tok = data::Tokenizer::load((model() / "spm.model").string());
  std::string prefix_text, prefix_ids, src_ids;
  std::vector<std::vector<int32_t>> prefixes;
  int line = 0;
  for (const std::string& l : lines_of(tgt_text)) {
    const std::string first_word = line++ % 3 == 2 ? "" : l.substr(0, l.find(' '));  // every third: none
    prefix_text += first_word + "\n";
    prefixes.push_back(tok.encode(first_word));
    for (int32_t id : prefixes.back()) prefix_ids += std::to_string(id) + " ";
    prefix_ids += "\n";
  }
  for (const std::string& l : lines_of(src_text)) {
    for (int32_t id : tok.encode(l)) src_ids += std::to_string(id) + " ";
    src_ids += std::to_string(data::kEosId) + "\n";
  }
  write(dir() / "prefix.de", prefix_text);
  write(dir() / "prefix.ids", prefix_ids);
  write(dir() / "p.en.ids", src_ids);
  const std::string m = "--model " + quote(model().string()) + " --threads 1 --beam 2 --max-len 30 ";
  CliResult text = attn("translate " + m + "--prefix " + quote((dir() / "prefix.de").string()) + " < " +
                        quote((dir() / "p.en").string()), dir());
  CliResult ids = attn("translate " + m + "--ids --prefix " + quote((dir() / "prefix.ids").string()) + " < " +
                       quote((dir() / "p.en.ids").string()), dir());
  ASSERT_EQ(text.code, 0) << text.err;
  ASSERT_EQ(ids.code, 0) << ids.err;
  const std::vector<std::string> got = lines_of(text.out), id_lines = lines_of(ids.out);
  ASSERT_EQ(got.size(), 8u);
  ASSERT_EQ(id_lines.size(), 8u);
  for (size_t i = 0; i < got.size(); ++i) {
    std::vector<int32_t> v;
    std::istringstream s(id_lines[i]);
    for (int32_t x; s >> x;) v.push_back(x);
    ASSERT_GE(v.size(), prefixes[i].size()) << "line " << i + 1;
    EXPECT_TRUE(std::equal(prefixes[i].begin(), prefixes[i].end(), v.begin())) << "line " << i + 1;
    EXPECT_EQ(got[i], tok.decode(v)) << "line " << i + 1;
  }
  CliResult alone = attn("translate " + m + "< " + quote((dir() / "p.en").string()), dir());
  CliResult twice = attn("translate " + m + "--model " + quote(model().string()) + " < " +
                         quote((dir() / "p.en").string()), dir());
  ASSERT_EQ(twice.code, 0) << twice.err;
  EXPECT_EQ(twice.out, alone.out);
  write(dir() / "p.de", tgt_text);
  const std::string pair = "--src " + quote((dir() / "p.en").string()) + " --tgt " + quote((dir() / "p.de").string());
  CliResult score_alone = attn("score --model " + quote(model().string()) + " " + pair, dir());
  CliResult score_twice = attn("score --model " + quote(model().string()) + " --model " + quote(model().string()) +
                               " " + pair, dir());
  ASSERT_EQ(score_twice.code, 0) << score_twice.err;
  EXPECT_EQ(score_twice.out, score_alone.out);
  EXPECT_EQ(lines_of(score_twice.out).size(), 8u);
}

// average --last 2 of the run's checkpoints (steps 20 and 30) is their element-wise mean.
TEST_F(TextPipeline, AverageOfTransformerCheckpointsIsTheMean) {
  std::vector<std::string> all = list_checkpoints(model().string());
  ASSERT_EQ(all.size(), 3u);
  const fs::path out = dir() / "averaged";
  CliResult r = attn("average " + quote(model().string()) + " --last 2 --out " + quote(out.string()), dir());
  ASSERT_EQ(r.code, 0) << r.err;
  auto a = io::load_safetensors(all[1] + "/model.safetensors"), b = io::load_safetensors(all[2] + "/model.safetensors");
  auto avg = io::load_safetensors((out / "model.safetensors").string());
  ASSERT_EQ(avg.size(), a.size());
  double worst = 0, moved = 0;
  for (const auto& [key, t] : avg) {
    ASSERT_TRUE(a.count(key) && b.count(key)) << key;
    Tensor x = a[key].contiguous(), y = b[key].contiguous(), g = t.contiguous();
    ASSERT_EQ(g.numel(), x.numel()) << key;
    for (int64_t i = 0; i < g.numel(); ++i) {
      const double want = (static_cast<double>(x.data<float>()[i]) + y.data<float>()[i]) / 2.0;
      worst = std::max(worst, std::fabs(g.data<float>()[i] - static_cast<double>(static_cast<float>(want))));
      moved = std::max(moved, std::fabs(static_cast<double>(x.data<float>()[i]) - y.data<float>()[i]));
    }
  }
  std::printf("[transformer average] %zu tensors, max |avg - mean| %.2e, checkpoints differ by up to %.2e\n",
              avg.size(), worst, moved);
  EXPECT_EQ(worst, 0.0);
  EXPECT_GT(moved, 0.0) << "the two checkpoints are the same: the mean proves nothing";
  std::ifstream config(out / "config.json");
  EXPECT_TRUE(config.good()) << "the averaged model directory has no config.json";
}

}  // namespace
}  // namespace attn
