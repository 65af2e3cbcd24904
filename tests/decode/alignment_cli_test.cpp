// attn translate --alignment / --output-format jsonl and attn attend through the binary, on an
// imported fixture model (ids mode): line N in gives line N out, the alignment has one link per
// output token into the source (eos left out), the JSON carries what the text does, and attend's
// document holds every layer and head with rows that are distributions.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_dir;
using testing::fixture_lines;

struct CliResult {
  int exit_code;
  std::string out, err;
};

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream s(text);
  for (std::string l; std::getline(s, l);) lines.push_back(l);
  return lines;
}

class AlignmentCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("attn_alignment_cli_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    CliResult r = run("import-torch " + quote(fixture_dir(kConfig)) + " " + quote(model()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto lines = fixture_lines(kConfig, "src.txt");
    std::ofstream(input()) << lines[0] << "\n\n" << lines[1] << "\n" << lines[2] << "\n";
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static CliResult run(const std::string& arguments) {
    std::string err_path = (dir_ / "stderr.txt").string();
    FILE* pipe = popen((std::string(ATTN_BINARY) + " " + arguments + " 2>" + quote(err_path)).c_str(), "r");
    if (!pipe) return {-1, "", "popen failed"};
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    int status = pclose(pipe);
    std::ifstream e(err_path);
    std::stringstream err;
    err << e.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err.str()};
  }
  static std::string model() { return (dir_ / "model").string(); }
  static std::string input() { return (dir_ / "input.txt").string(); }
  static std::string translate(const std::string& flags) {
    return "translate --model " + quote(model()) + " --ids --max-len 20 --threads 1 " + flags + " < " + quote(input());
  }
  static constexpr const char* kConfig = "post_shared_l2_h4";
  static inline std::filesystem::path dir_;
};

TEST_F(AlignmentCli, HardAlignmentFollowsEachTranslation) {
  CliResult plain = run(translate(""));
  CliResult aligned = run(translate("--alignment"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(aligned.exit_code, 0) << aligned.err;
  auto texts = split_lines(plain.out), lines = split_lines(aligned.out), sources = split_lines(
      fixture_lines(kConfig, "src.txt")[0] + "\n\n" + fixture_lines(kConfig, "src.txt")[1] + "\n" +
      fixture_lines(kConfig, "src.txt")[2]);
  ASSERT_EQ(lines.size(), 4u);
  for (size_t n = 0; n < lines.size(); ++n) {
    size_t bar = lines[n].find(" ||| ");
    ASSERT_NE(bar, std::string::npos) << lines[n];
    EXPECT_EQ(lines[n].substr(0, bar), texts[n]);
    std::istringstream out_ids(texts[n]), links(lines[n].substr(bar + 5)), src_ids(sources[n]);
    int64_t outputs = 0, source_tokens = -1, count = 0;  // the source's eos is not aligned
    for (std::string t; out_ids >> t;) ++outputs;
    for (std::string t; src_ids >> t;) ++source_tokens;
    for (std::string link; links >> link; ++count) {
      size_t dash = link.find('-');
      ASSERT_NE(dash, std::string::npos) << link;
      EXPECT_LT(std::stoll(link.substr(0, dash)), source_tokens) << link;
      EXPECT_EQ(std::stoll(link.substr(dash + 1)), count) << link;  // one per target token, in order
    }
    EXPECT_EQ(count, outputs) << lines[n];
  }
}

TEST_F(AlignmentCli, JsonLinesCarryNBestAndSoftAlignment) {
  CliResult r = run(translate("--beam 4 --n-best 2 --alignment soft --output-format jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 4u);
  for (size_t n = 0; n < lines.size(); ++n) {
    const nlohmann::json j = nlohmann::json::parse(lines[n]);
    EXPECT_EQ(j.at("line").get<int64_t>(), static_cast<int64_t>(n + 1));
    if (n == 1) {  // the empty line
      EXPECT_EQ(j.at("text"), "");
      EXPECT_TRUE(j.at("n_best").empty());
      continue;
    }
    ASSERT_EQ(j.at("n_best").size(), 2u);
    EXPECT_EQ(j.at("text"), j.at("n_best")[0].at("text"));
    EXPECT_GE(j.at("n_best")[0].at("score").get<double>(), j.at("n_best")[1].at("score").get<double>());
    const auto& soft = j.at("alignment");
    ASSERT_EQ(soft.size(), j.at("tokens").size());
    for (const auto& row : soft) {
      ASSERT_EQ(row.size(), j.at("source_tokens").size());
      double sum = 0;
      for (const auto& w : row) sum += w.get<double>();
      EXPECT_GT(sum, 0.0);
      EXPECT_LE(sum, 1.0 + 1e-5);
    }
  }
  CliResult bad = run(translate("--alignment diagonal"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--alignment must be hard or soft"), std::string::npos) << bad.err;
  CliResult layer = run(translate("--alignment --alignment-layer 3"));
  EXPECT_NE(layer.exit_code, 0);
  EXPECT_NE(layer.err.find("--alignment-layer 3 is more than the 2 encoder-decoder attention layers"), std::string::npos) << layer.err;
}

TEST_F(AlignmentCli, AttendDocumentHoldsEveryLayerAndHead) {
  CliResult r = run("attend --model " + quote(model()) + " --ids --src '5 9 14 7 2' --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.at("stacks").size(), 3u);  // encoder self, decoder self, cross
  const size_t src = doc.at("source").at("tokens").size(), tgt = doc.at("target").at("tokens").size();
  EXPECT_EQ(src, 5u);
  for (const auto& stack : doc.at("stacks")) {
    ASSERT_EQ(stack.at("layers").size(), 2u);
    for (const auto& layer : stack.at("layers")) {
      ASSERT_EQ(layer.at("heads").size(), 4u);
      for (const auto& head : layer.at("heads")) {
        const auto& w = head.at("weights");
        EXPECT_EQ(w.size(), stack.at("queries") == "source" ? src : tgt);
        for (size_t i = 0; i < w.size(); ++i) {
          double sum = 0;
          for (size_t j = 0; j < w[i].size(); ++j) {
            sum += w[i][j].get<double>();
            if (stack.at("id") == "decoder_self" && j > i) EXPECT_EQ(w[i][j].get<double>(), 0.0);  // causal
          }
          EXPECT_NEAR(sum, 1.0, 1e-5);
        }
      }
    }
  }
  CliResult one = run("attend --model " + quote(model()) + " --ids --src '5 9 14 7 2' --layer 2 --head 3 --format json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const nlohmann::json d1 = nlohmann::json::parse(one.out);
  EXPECT_EQ(d1.at("stacks")[0].at("layers").size(), 1u);
  EXPECT_EQ(d1.at("stacks")[0].at("layers")[0].at("heads")[0].at("head"), 3);
  CliResult svg = run("attend --model " + quote(model()) + " --ids --src '5 9 14 7 2' --format svg");
  ASSERT_EQ(svg.exit_code, 0) << svg.err;
  EXPECT_EQ(svg.out.rfind("<svg", 0), 0u);
  size_t maps = 0;
  for (size_t at = svg.out.find(" head "); at != std::string::npos; at = svg.out.find(" head ", at + 1)) ++maps;
  EXPECT_EQ(maps, 3u * 2u * 4u);  // "layer L head H" over each heatmap
  CliResult bad = run("attend --model " + quote(model()) + " --ids --src '5 9 2' --layer 3");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--layer 3"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace attn
