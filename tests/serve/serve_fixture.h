// What the serve tests share: small models made once per test program (a text translation model
// and a classifier trained for 2 steps by the attn binary, a torch_ref fixture Transformer for token
// ids), the CLI run on the same input (the answers' reference), and a Service over the models.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "service.h"

namespace attn::serve::testing {

namespace fs = std::filesystem;

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

// Runs `attn ARGS < stdin_file`; the exit code must be 0 (else attn::Error with its stderr).
inline std::string run_attn(const std::string& args, const std::string& stdin_text = "") {
  static int calls = 0;
  const fs::path tmp = fs::temp_directory_path() / ("attn_serve_cli_" + std::to_string(getpid()) + "_" + std::to_string(++calls));
  std::ofstream(tmp.string() + ".in") << stdin_text;
  const std::string cmd = std::string(ATTN_BINARY) + " " + args + " < " + quote(tmp.string() + ".in") + " 2> " +
                          quote(tmp.string() + ".err");
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  std::stringstream err;
  err << std::ifstream(tmp.string() + ".err").rdbuf();
  fs::remove(tmp.string() + ".in");
  fs::remove(tmp.string() + ".err");
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "attn ", args, " failed: ", err.str());
  return out;
}

// The first n lines of a shared data file.
inline std::vector<std::string> shared_lines(const std::string& file, size_t n, size_t every = 1) {
  std::ifstream in(std::string(ATTN_SHARED_DIR) + "/data/" + file);
  std::vector<std::string> out;
  size_t i = 0;
  for (std::string line; out.size() < n && std::getline(in, line); ++i)
    if (i % every == 0) out.push_back(line);
  return out;
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

struct TestModels {
  fs::path dir;
  std::string text, classifier, ids;  // model directories
};

// Made on first use; removed when the program ends.
inline const TestModels& test_models() {
  static const TestModels models = [] {
    TestModels m;
    m.dir = fs::temp_directory_path() / ("attn_serve_models_" + std::to_string(getpid()));
    fs::remove_all(m.dir);
    fs::create_directories(m.dir);
    const std::string d = m.dir.string();
    std::ofstream(d + "/train.en") << joined(shared_lines("mt-ende/train.en", 400));
    std::ofstream(d + "/train.de") << joined(shared_lines("mt-ende/train.de", 400));
    m.text = d + "/text";
    run_attn("train --set model_dir=" + m.text + " --set data.train_src=" + d + "/train.en --set data.train_tgt=" + d +
             "/train.de --set data.valid_src= --set data.valid_tgt= --set data.vocab_size=300 --set model.d_model=32"
             " --set model.heads=2 --set model.encoder_layers=2 --set model.decoder_layers=2 --set model.d_ff=48"
             " --set model.max_len=128 --set data.max_len=120 --set train.max_steps=2 --set train.max_tokens=600 --set train.threads=1"
             " --set train.validate_every=0 --set train.schedule=constant --set train.lr=0.002");
    std::ofstream(d + "/cls.tsv") << joined(shared_lines("cls-en-brown/train.tsv", 300, 50));
    m.classifier = d + "/cls";
    run_attn("train --set task=classification --set model_dir=" + m.classifier + " --set data.train=" + d +
             "/cls.tsv --set data.dev=" + d + "/cls.tsv --set model.pad_size=32 --set model.d_model=16"
             " --set model.heads=2 --set model.layers=1 --set model.d_ff=32 --set train.batch=16 --set train.threads=1"
             " --set train.validate_every=0 --set train.max_steps=2");
    m.ids = d + "/ids";
    save_transformer(import_torch(std::string(ATTN_TEST_DATA) + "/transformer/post_shared_l2_h4"), m.ids);
    std::atexit([] { fs::remove_all(fs::temp_directory_path() / ("attn_serve_models_" + std::to_string(getpid()))); });
    return m;
  }();
  return models;
}

// A Service over the three models, named "text", "cls" and "ids".
inline std::unique_ptr<Service> make_service(const ServiceOptions& options = {}) {
  const TestModels& t = test_models();
  std::vector<std::unique_ptr<ServedModel>> models;
  models.push_back(load_served_model({"text", t.text, ""}));
  models.push_back(load_served_model({"cls", t.classifier, ""}));
  models.push_back(load_served_model({"ids", t.ids, ""}));
  return std::make_unique<Service>(std::move(models), options);
}

// jsonl lines, parsed.
inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace attn::serve::testing
