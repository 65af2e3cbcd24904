// The committed Transformer fixtures (tests/fixtures/transformer/<config>/, made by
// tests/models/make_transformer_fixtures.py with torch_ref.py): the model, its id files and
// torch_ref.py's outputs, read for the decode tests.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attn/models/model_dir.h"

namespace attn::testing {

inline const std::vector<std::string>& transformer_configs() {
  static const std::vector<std::string> names = {"post_shared_l2_h4", "pre_unshared_l1_h1",
                                                 "post_unshared_l3_h8", "pre_shared_l3_h2"};
  return names;
}

inline std::string fixture_dir(const std::string& config) {
  return std::string(ATTN_TEST_DATA) + "/transformer/" + config;
}

// The model of a config, imported once per test program.
inline const Transformer& fixture_model(const std::string& config) {
  static std::map<std::string, Transformer> models;
  auto it = models.find(config);
  if (it == models.end()) it = models.emplace(config, import_torch(fixture_dir(config))).first;
  return it->second;
}

inline std::vector<std::string> fixture_lines(const std::string& config, const std::string& file) {
  std::ifstream in(fixture_dir(config) + "/" + file);
  EXPECT_TRUE(in.good()) << "cannot open " << fixture_dir(config) << "/" << file;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Each line as numbers (ids, or a row of floats).
template <typename T>
std::vector<std::vector<T>> fixture_rows(const std::string& config, const std::string& file) {
  std::vector<std::vector<T>> rows;
  for (const std::string& line : fixture_lines(config, file)) {
    std::istringstream s(line);
    rows.emplace_back();
    for (T x; s >> x;) rows.back().push_back(x);
  }
  return rows;
}

inline std::vector<std::vector<int32_t>> fixture_ids(const std::string& config, const std::string& file) {
  return fixture_rows<int32_t>(config, file);
}

}  // namespace attn::testing
