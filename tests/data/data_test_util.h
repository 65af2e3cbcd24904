// Helpers for the data tests: a scratch directory for the process, the real mt-ende corpus,
// small tokenizers trained once per process on its first lines (English + German), and
// synthetic examples for the batcher.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "attn/data/parallel_corpus.h"
#include "attn/data/text_file.h"
#include "attn/data/tokenizer.h"
#include "attn/error.h"
#include "attn/tensor/random.h"

namespace attn::data::testing {

inline std::string mt_dir() { return std::string(ATTN_SHARED_DIR) + "/data/mt-ende/"; }

// One scratch directory per test process, removed when the process ends.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      path = std::filesystem::temp_directory_path() /
             ("attn_data_test_" + std::to_string(::getpid()));
      std::filesystem::remove_all(path);
      std::filesystem::create_directories(path);
    }
    ~Dir() { std::filesystem::remove_all(path); }
  };
  static Dir dir;
  return dir.path;
}

inline std::string scratch(const std::string& name) { return (scratch_dir() / name).string(); }

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// The first n lines of a corpus file, written to the scratch directory; returns the new path.
inline std::string head_file(const std::string& name, int n) {
  auto lines = read_lines(mt_dir() + name);
  std::string text;
  for (int i = 0; i < n && i < static_cast<int>(lines.size()); ++i) text += lines[i] + "\n";
  std::string path = scratch("head" + std::to_string(n) + "_" + name);
  write_file(path, text);
  return path;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// BPE, 1,000 pieces, on train.{en,de} lines 1-5000; trained once per process.
inline const Tokenizer& slice_tokenizer() {
  static Tokenizer tok = [] {
    TokenizerTrainOptions o;
    o.inputs = {head_file("train.en", 5000), head_file("train.de", 5000)};
    o.model_prefix = scratch("slice_bpe1000");
    o.vocab_size = 1000;
    o.model_type = "bpe";
    auto t0 = std::chrono::steady_clock::now();
    Tokenizer::train(o);
    std::printf("[slice tokenizer] BPE 1000 on 5000+5000 lines: %.2f s\n", seconds_since(t0));
    return Tokenizer::load(o.model_prefix + ".model");
  }();
  return tok;
}

// BPE, 200 pieces, on lines 1-300: for tests that need some tokenizer, quickly.
inline const Tokenizer& tiny_tokenizer() {
  static Tokenizer tok = [] {
    TokenizerTrainOptions o;
    o.inputs = {head_file("train.en", 300), head_file("train.de", 300)};
    o.model_prefix = scratch("tiny_bpe200");
    o.vocab_size = 200;
    o.model_type = "bpe";
    Tokenizer::train(o);
    return Tokenizer::load(o.model_prefix + ".model");
  }();
  return tok;
}

// Runs `call`, which must throw attn::Error with every one of `parts` in its message.
inline void expect_error(const std::function<void()>& call, const std::vector<std::string>& parts) {
  try {
    call();
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    return;
  }
  ADD_FAILURE() << "no attn::Error thrown";
}

// n pairs of random ids in [4, 500): source length 0..max_len, target near it (0..max_len).
inline std::vector<Example> random_examples(int64_t n, int64_t max_len, uint64_t seed) {
  Rng rng(seed);
  std::vector<Example> ex(n);
  for (int64_t i = 0; i < n; ++i) {
    const auto s = static_cast<int64_t>(rng.below(max_len + 1));
    const auto t = std::min<int64_t>(max_len, s / 2 + static_cast<int64_t>(rng.below(s + 2)));
    for (int64_t k = 0; k < s; ++k) ex[i].src.push_back(4 + static_cast<int32_t>(rng.below(496)));
    for (int64_t k = 0; k < t; ++k) ex[i].tgt.push_back(4 + static_cast<int32_t>(rng.below(496)));
    ex[i].line = i;
  }
  return ex;
}

}  // namespace attn::data::testing
