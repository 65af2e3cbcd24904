// attn translate and attn score end to end: import-torch a fixture, then the binary's output
// against torch_ref.py's files; input order, empty lines, n-best format and the error messages.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_dir;
using testing::fixture_lines;

struct CliRun {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

class TranslateCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("attn_decode_cli_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    CliRun r = run("import-torch " + quote(fixture_dir(kConfig)) + " " + quote(model()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static CliRun run(const std::string& arguments) {
    std::string err_path = (dir_ / "stderr.txt").string();
    std::string cmd = std::string(ATTN_BINARY) + " " + arguments + " 2>" + quote(err_path);
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return {-1, "", "popen failed"};
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, slurp(err_path)};
  }
  static std::string model() { return (dir_ / "model").string(); }
  static std::string src() { return fixture_dir(kConfig) + "/src.txt"; }
  static std::string write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  static constexpr const char* kConfig = "post_unshared_l3_h8";
  static inline std::filesystem::path dir_;
};

TEST_F(TranslateCli, BeamAndGreedyEqualTorchRef) {
  CliRun beam = run("translate --model " + quote(model()) + " --ids --beam 4 --length-penalty 0.6 "
                    "--max-len 20 --batch 5 --threads 1 < " + quote(src()));
  EXPECT_EQ(beam.exit_code, 0) << beam.err;
  EXPECT_EQ(beam.out, join_lines(fixture_lines(kConfig, "beam4.txt")));
  CliRun greedy = run("translate --model " + quote(model()) + " --ids --beam 1 --max-len 20 < " + quote(src()));
  EXPECT_EQ(greedy.exit_code, 0) << greedy.err;
  EXPECT_EQ(greedy.out, join_lines(fixture_lines(kConfig, "greedy.txt")));
}

TEST_F(TranslateCli, EmptyLinesAndNBest) {
  auto lines = fixture_lines(kConfig, "src.txt");
  auto beam = fixture_lines(kConfig, "beam4.txt");
  std::string input = write("empty.txt", lines[0] + "\n\n" + lines[1] + "\n");
  CliRun r = run("translate --model " + quote(model()) + " --ids --max-len 20 < " + quote(input));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, beam[0] + "\n\n" + beam[1] + "\n");

  CliRun n = run("translate --model " + quote(model()) + " --ids --max-len 20 --n-best 3 < " + quote(input));
  EXPECT_EQ(n.exit_code, 0) << n.err;
  std::istringstream s(n.out);
  std::string line;
  int count = 0;
  double previous = 0.0;
  std::string previous_id;
  while (std::getline(s, line)) {
    // i ||| tokens ||| score
    size_t a = line.find(" ||| "), b = line.rfind(" ||| ");
    ASSERT_NE(a, std::string::npos) << line;
    ASSERT_NE(a, b) << line;
    std::string id = line.substr(0, a), tokens = line.substr(a + 5, b - a - 5);
    double score = std::stod(line.substr(b + 5));
    EXPECT_TRUE(id == "0" || id == "2") << line;  // the empty line (1) has no hypotheses
    if (id == previous_id) {
      EXPECT_GE(previous, score) << line;
    } else {
      EXPECT_EQ(tokens, beam[id == "0" ? 0 : 1]) << "the first of each list is the 1-best";
    }
    previous = score;
    previous_id = id;
    ++count;
  }
  EXPECT_GE(count, 2);
  EXPECT_LE(count, 6);
}

TEST_F(TranslateCli, BadInputNamesTheLine) {
  std::string bad = write("bad.txt", "5 6 2\n7 x 2\n");
  CliRun r = run("translate --model " + quote(model()) + " --ids < " + quote(bad));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("<stdin>:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'x'"), std::string::npos) << r.err;

  std::string range = write("range.txt", "5 6 2\n5 6 2\n5 999 2\n");
  r = run("translate --model " + quote(model()) + " --ids < " + quote(range));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("<stdin>:3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("999"), std::string::npos) << r.err;

  std::string padding = write("padding.txt", "5 6 2\n0 0\n");
  r = run("translate --model " + quote(model()) + " --ids < " + quote(padding));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("<stdin>:2"), std::string::npos) << r.err;

  r = run("translate --model " + quote(model()) + " --ids --max-len 5000 < " + quote(src()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("5000"), std::string::npos) << r.err;

  r = run("translate --model " + quote(model()) + " < " + quote(src()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("tokenizer"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--ids"), std::string::npos) << r.err;
}

// The ids of a line, and lines of ids.
std::vector<std::string> words(const std::string& line) {
  std::istringstream s(line);
  std::vector<std::string> out;
  for (std::string w; s >> w;) out.push_back(w);
  return out;
}
std::string spaced(const std::vector<std::string>& w, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) out += (i > begin ? " " : "") + w[i];
  return out;
}

// A line longer than the model's positions never stops the run or loses its line: split (the
// default) translates it in near-equal pieces that fit and joins their outputs on its line;
// truncate keeps its first positions; error stops, naming the line.
TEST_F(TranslateCli, LongLinesAreSplitOrTruncatedOrRefusedNeverDropped) {
  const std::string small = (dir_ / "small").string();
  std::filesystem::remove_all(small);
  std::filesystem::copy(model(), small, std::filesystem::copy_options::recursive);
  std::string config = slurp(small + "/config.json");
  const size_t at = config.find("\"max_len\"");
  ASSERT_NE(at, std::string::npos) << config;
  config.replace(at, config.find_first_of(",}", at) - at, "\"max_len\": 8");
  std::ofstream(small + "/config.json") << config;

  auto lines = fixture_lines(kConfig, "src.txt");
  const std::vector<std::string> long_ids = words(lines[0] + " " + lines[1]);  // 22 ids: 3 pieces of 8, 7, 7
  ASSERT_EQ(long_ids.size(), 22u);
  const std::string input = write("long.txt", lines[3] + "\n" + spaced(long_ids, 0, 22) + "\n" + lines[4] + "\n");
  const std::string flags = "translate --model " + quote(small) + " --ids --max-len 8 --threads 1 ";
  const std::string pieces = write("pieces.txt", lines[3] + "\n" + spaced(long_ids, 0, 8) + "\n" + spaced(long_ids, 8, 15) +
                                                   "\n" + spaced(long_ids, 15, 22) + "\n" + lines[4] + "\n" +
                                                   spaced(long_ids, 0, 8) + "\n");
  CliRun apart = run(flags + "< " + quote(pieces));
  ASSERT_EQ(apart.exit_code, 0) << apart.err;
  std::vector<std::string> out;
  std::istringstream s(apart.out);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  ASSERT_EQ(out.size(), 6u);
  std::string joined;
  for (size_t i = 1; i <= 3; ++i) joined += (joined.empty() || out[i].empty() ? "" : " ") + out[i];

  CliRun split = run(flags + "< " + quote(input));
  EXPECT_EQ(split.exit_code, 0) << split.err;
  EXPECT_EQ(split.out, out[0] + "\n" + joined + "\n" + out[4] + "\n");
  EXPECT_NE(split.err.find("<stdin>:2: 22 tokens"), std::string::npos) << split.err;
  EXPECT_NE(split.err.find("3 pieces"), std::string::npos) << split.err;

  CliRun truncated = run(flags + "--on-long truncate < " + quote(input));
  EXPECT_EQ(truncated.exit_code, 0) << truncated.err;
  EXPECT_EQ(truncated.out, out[0] + "\n" + out[5] + "\n" + out[4] + "\n");
  EXPECT_NE(truncated.err.find("<stdin>:2"), std::string::npos) << truncated.err;

  CliRun refused = run(flags + "--on-long error < " + quote(input));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("<stdin>:2: 22 tokens, more than the model's 8 positions"), std::string::npos) << refused.err;
}

TEST_F(TranslateCli, ScoreEqualsTorchRef) {
  std::string tgt = fixture_dir(kConfig) + "/tgt.txt";
  CliRun r = run("score --model " + quote(model()) + " --ids --src " + quote(src()) + " --tgt " +
                 quote(tgt) + " --batch 7");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto expected = fixture_lines(kConfig, "score.txt");
  std::istringstream s(r.out);
  std::string line;
  size_t i = 0;
  double worst = 0.0;
  for (; std::getline(s, line); ++i) {
    ASSERT_LT(i, expected.size());
    EXPECT_EQ(line.size() - line.find('.') - 1, 6u) << "6 decimals: " << line;
    worst = std::max(worst, std::fabs(std::stod(line) - std::stod(expected[i])));
  }
  EXPECT_EQ(i, expected.size());
  std::printf("attn score (CLI, batch 7): max |diff| %.2e against torch_ref.py (tolerance 1e-3)\n", worst);
  EXPECT_LE(worst, 1e-3);
}

TEST_F(TranslateCli, ScoreLineCountMismatchNamesBothFiles) {
  std::string short_tgt = write("short.txt", "5 6\n7\n");
  CliRun r = run("score --model " + quote(model()) + " --ids --src " + quote(src()) + " --tgt " + quote(short_tgt));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(src()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(short_tgt), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("24"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace attn
