// What the training tests share: temporary directories, a slice of the real English-German corpus
// with its tokenizer, a tiny translation run, the log's records, and `attn train` in a child process.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/text_file.h"
#include "attn/data/tokenizer.h"
#include "attn/train/translation_trainer.h"

namespace attn::testing {

inline std::string temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  std::string d = (fs::temp_directory_path() / ("attn_" + name + "_" + std::to_string(::getpid()))).string();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The first n lines of a real corpus file, written to dir/name.
inline std::string head(const std::string& src, const std::string& dir, const std::string& name, size_t n) {
  auto lines = data::read_lines(src);
  std::ofstream out(dir + "/" + name);
  for (size_t i = 0; i < n && i < lines.size(); ++i) out << lines[i] << "\n";
  return dir + "/" + name;
}

// dir/train.{en,de}: the first `lines` pairs of the real corpus; dir/spm.model: a tokenizer of `vocab` pieces.
inline void write_corpus(const std::string& dir, size_t lines, int vocab) {
  std::string shared = std::string(ATTN_SHARED_DIR) + "/data/mt-ende/";
  head(shared + "train.en", dir, "train.en", lines);
  head(shared + "train.de", dir, "train.de", lines);
  data::TokenizerTrainOptions t;
  t.inputs = {dir + "/train.en", dir + "/train.de"};
  t.model_prefix = dir + "/spm";
  t.vocab_size = vocab;
  data::Tokenizer::train(t);
}

// The records of one event ("train", "valid", ...) in a model directory's train_log.jsonl, in order
// (a line a kill cut short is left out).
inline std::vector<nlohmann::json> log_events(const std::string& model_dir, const std::string& event) {
  std::vector<nlohmann::json> out;
  std::ifstream in(model_dir + "/train_log.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // a line cut by a kill
    if (j["event"] == event) out.push_back(std::move(j));
  }
  return out;
}

inline std::vector<double> logged_losses(const std::string& model_dir) {
  std::vector<double> out;
  for (const auto& j : log_events(model_dir, "train")) out.push_back(j["loss"].get<double>());
  return out;
}

// Per-step training loss of a model directory's log; for a step logged twice (a run killed after
// logging it and resumed from an earlier checkpoint) the later line counts.
inline std::map<int64_t, double> losses_by_step(const std::string& model_dir) {
  std::map<int64_t, double> out;
  for (const auto& j : log_events(model_dir, "train")) out[j["step"].get<int64_t>()] = j["loss"].get<double>();
  return out;
}

// A tiny model on dir's corpus (write_corpus), a checkpoint every 3 steps, no dev set.
inline TranslationTrainOptions small_run(const std::string& dir, const std::string& model_dir) {
  TranslationTrainOptions o;
  o.model_dir = model_dir;
  o.train_src = dir + "/train.en";
  o.train_tgt = dir + "/train.de";
  o.valid_src = o.valid_tgt = "";  // no dev set unless the test gives one
  o.tokenizer = dir + "/spm.model";
  o.model = TransformerConfig{.d_model = 32, .heads = 2, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 64,
                              .dropout = 0.1f, .norm_first = true, .max_len = 512};  // dropout: its stream must resume exactly too
  o.max_tokens = 512;
  o.schedule.warmup = 5;
  o.schedule.d_model = 32;
  o.schedule.decay = "none";  // the same rates whatever the step budget: a stopped run's budget is not the straight run's
  o.log_every = 1;
  o.checkpoint_minutes = 0;
  o.checkpoint_every = 3;
  o.validate_every = 0;
  return o;
}

// Runs `attn train` with these arguments in a child process, stderr to `log`; returns its pid.
inline pid_t spawn_attn_train(const std::vector<std::string>& args, const std::string& log) {
  pid_t child = fork();
  if (child == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    std::vector<char*> argv{const_cast<char*>(ATTN_BINARY), const_cast<char*>("train")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(ATTN_BINARY, argv.data());
    _exit(127);
  }
  return child;
}

// `--set key=value` for each of `settings`, after `args`.
inline std::vector<std::string> with_sets(std::vector<std::string> args, const std::vector<std::string>& settings) {
  for (const std::string& kv : settings) {
    args.push_back("--set");
    args.push_back(kv);
  }
  return args;
}

}  // namespace attn::testing
