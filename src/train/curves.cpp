// Reading training logs into curves (include/attn/train/curves.h).
#include "attn/train/curves.h"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/io/atomic_file.h"

namespace attn {

namespace {

// The log's field for each series, by event. Classification logs dev_loss and samples/s,
// translation dev_nll and target tokens/s.
struct Field {
  const char* event;
  const char* key;
  const char* series;
  double scale;
};
constexpr Field kFields[] = {
    {"train", "loss", "loss", 1},
    {"train", "lr", "lr", 1},
    {"train", "tgt_tokens_per_s", "tokens_per_s", 1},
    {"train", "samples_per_s", "samples_per_s", 1},
    {"valid", "dev_nll", "dev_loss", 1},
    {"valid", "dev_loss", "dev_loss", 1},
    {"valid", "dev_bleu", "dev_bleu", 1},
    {"valid", "dev_chrf", "dev_chrf", 1},
    {"valid", "dev_accuracy", "dev_accuracy", 100},
};

// Appends a point; a step at or before the series' last one (a resumed run logging again the
// steps after its checkpoint) first drops the points it replaces.
void add_point(std::vector<CurvePoint>& s, const CurvePoint& p) {
  while (!s.empty() && s.back().step >= p.step) s.pop_back();
  s.push_back(p);
}

// One record's figures; returns the reason it cannot be read, or "" when it was read.
std::string read_record(const nlohmann::json& j, RunCurves& run) {
  if (!j.is_object()) return "not a JSON object";
  if (!j.contains("event") || !j["event"].is_string()) return "no \"event\"";
  const std::string event = j["event"].get<std::string>();
  if (event != "train" && event != "valid") return "";
  if (!j.contains("step") || !j["step"].is_number()) return "a \"" + event + "\" line without a numeric \"step\"";
  CurvePoint p;
  p.step = j["step"].get<double>();
  p.elapsed = j.contains("elapsed") && j["elapsed"].is_number() ? j["elapsed"].get<double>() : 0.0;
  for (const Field& f : kFields) {
    if (event != f.event || !j.contains(f.key)) continue;
    const nlohmann::json& v = j[f.key];
    if (v.is_null()) continue;  // a non-finite figure is written as null
    if (!v.is_number()) return std::string("\"") + f.key + "\" is not a number";
    p.value = v.get<double>() * f.scale;
    add_point(run.series[f.series], p);
  }
  return "";
}

}  // namespace

RunCurves parse_train_log(std::string_view text, const std::string& name, std::vector<std::string>& warnings) {
  RunCurves run;
  run.name = name;
  int64_t number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::string problem;
    try {
      problem = read_record(nlohmann::json::parse(line), run);
    } catch (const nlohmann::json::exception&) {
      problem = "not valid JSON";
    }
    if (!problem.empty()) warnings.push_back(name + ":" + std::to_string(number) + ": " + problem + ", left out");
  }
  return run;
}

RunCurves read_train_log(const std::string& dir_or_file, const std::string& name, std::vector<std::string>& warnings) {
  namespace fs = std::filesystem;
  const std::string path = fs::is_directory(dir_or_file) ? dir_or_file + "/train_log.jsonl" : dir_or_file;
  check(fs::exists(path), path, ": no training log here (a run directory holds train_log.jsonl)");
  return parse_train_log(io::read_file(path), name.empty() ? path : name, warnings);
}

void write_training_curves(const std::string& model_dir) {
  const std::string out = model_dir + "/curves.svg";
  try {
    std::vector<std::string> warnings;
    RunCurves run = read_train_log(model_dir, model_dir, warnings);
    for (const std::string& w : warnings) std::fprintf(stderr, "curves: %s\n", w.c_str());
    io::write_file_atomic(out, curves_svg({run}, CurveAxis::step));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "curves: %s not written: %s\n", out.c_str(), e.what());
  }
}

}  // namespace attn
