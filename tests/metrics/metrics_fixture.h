// Shared by the tests of tests/metrics: sacreBLEU's figures from tests/fixtures/metrics/
// (written by make_metrics_fixtures.py) and the fixture's text files, read line by line.
#pragma once

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace attn::metrics::testing {

inline std::string fixture_path(const std::string& name) {
  return std::string(ATTN_TEST_DATA) + "/metrics/" + name;
}

// Lines split at '\n' only, nothing stripped: what the Python script wrote.
inline std::vector<std::string> fixture_lines(const std::string& name) {
  std::ifstream in(fixture_path(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << fixture_path(name);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

inline const nlohmann::json& expected() {
  static const nlohmann::json j = [] {
    std::ifstream in(fixture_path("expected.json"));
    EXPECT_TRUE(in.good()) << "cannot open " << fixture_path("expected.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

// The required agreement with sacreBLEU is 0.01 BLEU; attn computes the same floating-point operations in
// the same order as sacreBLEU, so the figures agree to rounding noise.
constexpr double kTolerance = 1e-9;

}  // namespace attn::metrics::testing
