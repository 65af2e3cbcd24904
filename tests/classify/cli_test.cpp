// End to end through the attn binary: train small classifiers on synthetic two-class sets they
// must learn (characters; English words and SentencePiece pieces), classify and eval with them,
// and resume that continues exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/io/io.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << cmd << "\n" << out;
  return out;
}

// Class "shan" texts draw from 山水风, class "he" from 河月花; both share 的 and 之.
void write_set(const std::string& path, int n, uint64_t seed) {
  const char* a[] = {"山", "水", "风", "的", "之"};
  const char* b[] = {"河", "月", "花", "的", "之"};
  Rng rng(seed);
  std::ofstream f(path);
  for (int i = 0; i < n; ++i) {
    bool first = i % 2 == 0;
    f << (first ? "shan" : "he") << "\t";
    int len = 3 + static_cast<int>(rng.below(6));
    for (int j = 0; j < len; ++j) f << (first ? a : b)[rng.below(5)];
    f << "\n";
  }
}

// English: class "sport" sentences use match/goal/team words, "cook" oven/bread/salt; both share
// filler words. Word forms vary by suffix so SentencePiece has pieces to find.
void write_english_set(const std::string& path, int n, uint64_t seed) {
  const char* a[] = {"match", "matches", "goal", "goals", "team", "teams", "the", "a", "was"};
  const char* b[] = {"oven", "ovens", "bread", "breads", "salt", "salted", "the", "a", "was"};
  Rng rng(seed);
  std::ofstream f(path);
  for (int i = 0; i < n; ++i) {
    bool first = i % 2 == 0;
    f << (first ? "sport" : "cook") << "\t";
    int len = 3 + static_cast<int>(rng.below(5));
    for (int j = 0; j < len; ++j) f << (j ? " " : "") << (first ? a : b)[rng.below(9)];
    f << "\n";
  }
}

struct ClassifierCli : ::testing::Test {
  std::string dir = (fs::temp_directory_path() / ("attn_cls_cli_" + std::to_string(::getpid()))).string();
  std::string bin = ATTN_BINARY;
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_set(dir + "/train.tsv", 128, 1);
    write_set(dir + "/dev.tsv", 40, 2);
    write_english_set(dir + "/en_train.tsv", 128, 3);
    write_english_set(dir + "/en_dev.tsv", 40, 4);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string train(const std::string& model, const std::string& extra, const std::string& set = "") {
    return run(bin + " train --set task=classification --set model_dir=" + dir + "/" + model +
               " --set data.train=" + dir + "/" + set + "train.tsv --set data.dev=" + dir + "/" + set + "dev.tsv" +
               " --set model.pad_size=8 --set model.d_model=16 --set model.heads=2 --set model.layers=1" +
               " --set model.d_ff=32 --set model.dropout=0.1 --set train.batch=16 --set train.lr=0.005" +
               " --set train.threads=1 --set train.validate_every=0 " + extra + " 2>&1");
  }
};

TEST_F(ClassifierCli, TrainsClassifiesAndEvaluates) {
  train("m", "--set model.pooling=mean --set model.mask=true --set train.max_steps=40");
  std::string report = run(bin + " eval --model " + dir + "/m --data " + dir + "/dev.tsv --threads 1");
  // Texts made only of the shared characters are a coin toss; the rest must be right.
  ASSERT_EQ(report.rfind("accuracy ", 0), 0u) << report;
  double accuracy = std::stod(report.substr(9));
  std::printf("synthetic dev accuracy %.4f (must be >= 0.9)\n", accuracy);
  EXPECT_GE(accuracy, 0.9) << report;
  EXPECT_NE(report.find("confusion matrix"), std::string::npos) << report;
  std::ofstream(dir + "/in.txt") << "山水风山\n河月花\n";
  std::string out = run(bin + " classify --model " + dir + "/m --top-k 2 --threads 1 < " + dir + "/in.txt");
  std::istringstream lines(out);
  std::string l1, l2;
  std::getline(lines, l1);
  std::getline(lines, l2);
  EXPECT_EQ(l1.substr(0, 5), "shan\t") << out;
  EXPECT_EQ(l2.substr(0, 3), "he\t") << out;
  EXPECT_EQ(std::count(l1.begin(), l1.end(), '\t'), 3) << "top-2 gives two label/prob pairs: " << l1;

  // Blank lines (empty or only spaces) give empty lines, as in translate; a Windows line end is
  // the same line; invalid UTF-8 is an error naming the line.
  std::ofstream(dir + "/blank.txt") << "山水风山\r\n   \n\n河月花\n";
  std::string with_blanks = run(bin + " classify --model " + dir + "/m --threads 1 < " + dir + "/blank.txt");
  std::string plain = run(bin + " classify --model " + dir + "/m --threads 1 < " + dir + "/in.txt");
  std::istringstream two(plain);
  std::string p1, p2;
  std::getline(two, p1);
  std::getline(two, p2);
  EXPECT_EQ(with_blanks, p1 + "\n\n\n" + p2 + "\n");
  std::ofstream(dir + "/bad.txt") << "山水\n\xff\xfe\n";
  FILE* p = popen((bin + " classify --model " + dir + "/m --threads 1 < " + dir + "/bad.txt 2>&1").c_str(), "r");
  char buf[4096];
  std::string err(buf, fread(buf, 1, sizeof buf, p));
  EXPECT_NE(pclose(p), 0);
  EXPECT_NE(err.find("<stdin>:2: invalid UTF-8"), std::string::npos) << err;
}

// English with word tokens and with SentencePiece pieces (spm.model trained into the model
// directory and used by eval and classify).
TEST_F(ClassifierCli, WordAndSpmTokens) {
  for (const std::string tokens : {"word", "spm"}) {
    train(tokens, "--set data.tokens=" + tokens + " --set data.spm_vocab=30 --set model.pooling=mean" +
                      " --set model.mask=true --set train.max_steps=40", "en_");
    std::ifstream vocab(dir + "/" + tokens + "/vocab.txt");
    std::string first;
    std::getline(vocab, first);
    EXPECT_EQ(first, "#level=" + tokens);
    EXPECT_EQ(fs::exists(dir + "/" + tokens + "/spm.model"), tokens == "spm");
    std::string report = run(bin + " eval --model " + dir + "/" + tokens + " --data " + dir + "/en_dev.tsv --threads 1");
    ASSERT_EQ(report.rfind("accuracy ", 0), 0u) << report;
    double accuracy = std::stod(report.substr(9));
    std::printf("%s tokens: synthetic English dev accuracy %.4f (must be >= 0.9)\n", tokens.c_str(), accuracy);
    EXPECT_GE(accuracy, 0.9) << report;
    std::ofstream(dir + "/en_in.txt") << "the goals matches\nsalted breads\n";
    std::string out = run(bin + " classify --model " + dir + "/" + tokens + " --threads 1 < " + dir + "/en_in.txt");
    EXPECT_EQ(out.substr(0, 6), "sport\t") << out;
    EXPECT_NE(out.find("\ncook\t"), std::string::npos) << out;
  }
}

TEST_F(ClassifierCli, ResumeContinuesExactly) {
  train("straight", "--set train.max_steps=12 --set train.checkpoint_every=6");
  train("resumed", "--set train.max_steps=6");
  train("resumed", "--set train.max_steps=12 --resume");
  auto a = io::load_safetensors(dir + "/straight/checkpoints/step-00000012/model.safetensors");
  auto b = io::load_safetensors(dir + "/resumed/checkpoints/step-00000012/model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [k, t] : a) EXPECT_EQ(t.to_vector(), b.at(k).to_vector()) << k;
}

// train.ema_decay: the checkpoint's average continues exactly across --resume; the model directory
// holds the average (the validated weights), model_dir/raw the raw weights, and they differ.
TEST_F(ClassifierCli, MovingAverageResumesExactlyAndIsTheSavedModel) {
  const std::string ema = " --set train.ema_decay=0.9";
  train("straight", "--set train.max_steps=12 --set train.checkpoint_every=6" + ema);
  train("resumed", "--set train.max_steps=6" + ema);
  train("resumed", "--set train.max_steps=12 --resume" + ema);
  auto a = io::load_safetensors(dir + "/straight/checkpoints/step-00000012/ema.safetensors");
  auto b = io::load_safetensors(dir + "/resumed/checkpoints/step-00000012/ema.safetensors");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [k, t] : a) EXPECT_EQ(t.to_vector(), b.at(k).to_vector()) << k;
  // The saved model is the average at its best validation's step (a checkpoint's step: every
  // epoch's end is both), and the raw weights of that step differ from it.
  const auto config = nlohmann::json::parse(io::read_file(dir + "/straight/config.json"));
  const int64_t step = config["training"]["step"].get<int64_t>();
  char name[32];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(step));
  auto average = io::load_safetensors(dir + "/straight/checkpoints/" + name + "/ema.safetensors");
  auto saved = io::load_safetensors(dir + "/straight/model.safetensors");
  auto raw = io::load_safetensors(dir + "/straight/raw/model.safetensors");
  bool raw_differs = false;
  for (const auto& [k, t] : average) {
    EXPECT_EQ(t.to_vector(), saved.at(k).to_vector()) << k;
    raw_differs = raw_differs || t.to_vector() != raw.at(k).to_vector();
  }
  EXPECT_TRUE(raw_differs);
  EXPECT_EQ(config["training"]["ema_decay"].get<double>(), 0.9);
  EXPECT_TRUE(fs::exists(dir + "/straight/raw/vocab.txt"));
}

// attn average on a classifier's directory (issue 50: it said only that config.json was no
// translation model): the mean of the newest checkpoints, with the run's vocabulary and labels,
// a model attn classify reads.
TEST_F(ClassifierCli, AverageOfAClassifiersCheckpointsIsAClassifier) {
  train("avg", "--set train.max_steps=12 --set train.checkpoint_every=4 --set train.keep_checkpoints=0");
  run(bin + " average " + dir + "/avg --last 2 --out " + dir + "/avg2 2>&1");
  auto a = io::load_safetensors(dir + "/avg/checkpoints/step-00000008/model.safetensors");
  auto b = io::load_safetensors(dir + "/avg/checkpoints/step-00000012/model.safetensors");
  auto mean = io::load_safetensors(dir + "/avg2/model.safetensors");
  ASSERT_EQ(mean.size(), a.size());
  for (const auto& [k, t] : mean) {
    const std::vector<float> x = a.at(k).to_vector(), y = b.at(k).to_vector(), m = t.to_vector();
    ASSERT_EQ(m.size(), x.size()) << k;
    for (size_t i = 0; i < m.size(); ++i) ASSERT_NEAR(m[i], (x[i] + y[i]) / 2, 1e-6) << k << "[" << i << "]";
  }
  std::ofstream(dir + "/in.txt") << "山水风山\n河月花\n";
  const std::string out = run(bin + " classify --model " + dir + "/avg2 --threads 1 < " + dir + "/in.txt");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;
}

}  // namespace
}  // namespace attn
