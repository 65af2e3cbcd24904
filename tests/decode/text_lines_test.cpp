// attn translate on text as users bring it, through a small model trained on the real corpus:
// Windows line ends, invalid UTF-8, blank lines, and lines longer than the model's positions,
// with output line N always the translation of input line N; score's blank source lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <sstream>

#include "attn/decode/long_lines.h"
#include "attn/decode/id_lines.h"
#include "attn/io/atomic_file.h"
#include "train/train_fixture.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using namespace attn::testing;

struct CliResult {
  int exit_code;
  std::string out, err;
};

class TextLines : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir("text_lines");
    write_corpus(dir_, 400, 300);
    TranslationTrainOptions o = small_run(dir_, dir_ + "/model");
    std::get<TransformerConfig>(o.model).max_len = 16;  // positions: a long sentence is easy to make
    o.max_len = 14;
    o.max_steps = 3;
    train_translation(o);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult translate(const std::string& input, const std::string& flags = "") {
    const std::string in = dir_ + "/in.txt", err = dir_ + "/err.txt";
    io::write_file_atomic(in, input);
    const std::string cmd = std::string(ATTN_BINARY) + " translate --model " + dir_ + "/model --threads 1 --max-len 16 " +
                            flags + " < " + in + " 2>" + err;
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, io::read_file(err)};
  }
  static inline std::string dir_;
};

size_t count_lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST_F(TextLines, WindowsLineEndsGiveTheSameOutput) {
  CliResult unix_ends = translate("A small house.\nThe cat sleeps.\n");
  CliResult windows_ends = translate("\xEF\xBB\xBF" "A small house.\r\nThe cat sleeps.\r\n");
  ASSERT_EQ(unix_ends.exit_code, 0) << unix_ends.err;
  EXPECT_EQ(windows_ends.exit_code, 0) << windows_ends.err;
  EXPECT_EQ(windows_ends.out, unix_ends.out);
  EXPECT_EQ(windows_ends.out.find('\r'), std::string::npos);
}

TEST_F(TextLines, InvalidUtf8IsAnErrorNamingTheLine) {
  CliResult r = translate("A small house.\nbad \xC3\x28 byte\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("<stdin>:2: invalid UTF-8 (byte 0xC3 at column 5)"), std::string::npos) << r.err;
}

// Blank lines (empty, or only spaces and tabs) give empty lines, in text and in --ids alike.
TEST_F(TextLines, BlankLinesGiveEmptyLines) {
  CliResult one = translate("A small house.\n");
  CliResult r = translate("A small house.\n   \n\t\n\nA small house.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, one.out + "\n\n\n" + one.out);
  CliResult ids = translate("5 6 2\n  \n\n5 6 2\n", "--ids");
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  std::istringstream s(ids.out);
  std::vector<std::string> lines;
  for (std::string l; std::getline(s, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(lines[1].empty() && lines[2].empty());
  EXPECT_EQ(lines[0], lines[3]);
}

// A sentence of more tokens than the 16 positions is translated in pieces cut at spaces, whose
// outputs make its one output line; every other line keeps its place.
TEST_F(TextLines, ALongLineIsSplitIntoPiecesAndJoinedOnItsLine) {
  const std::string long_line =
      "The committee met on Tuesday to discuss the budget for the coming year, and after a long debate "
      "the members agreed to spend more money on schools, roads and hospitals in the northern region.";
  data::Tokenizer tokenizer = data::Tokenizer::load(dir_ + "/model/spm.model");
  FittedSource f = fit_text(tokenizer, long_line, data::kEosId, 16, OnLong::split, "x");
  ASSERT_GE(f.pieces.size(), 3u);
  for (const auto& p : f.pieces) EXPECT_LE(p.size(), 16u);
  std::string pieces;
  for (const auto& p : f.pieces) pieces += format_ids(p) + "\n";
  CliResult apart = translate(pieces, "--ids");
  ASSERT_EQ(apart.exit_code, 0) << apart.err;
  std::vector<int32_t> joined;
  std::istringstream s(apart.out);
  for (std::string l; std::getline(s, l);)
    for (int32_t id : parse_ids(l, 1 << 20, "out")) joined.push_back(id);
  CliResult one = translate("A small house.\n");
  CliResult r = translate("A small house.\n" + long_line + "\nA small house.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, one.out + tokenizer.decode(joined) + "\n" + one.out);
  EXPECT_NE(r.err.find("<stdin>:2: " + std::to_string(f.tokens) + " tokens, more than the model's 16 positions"),
            std::string::npos) << r.err;
  CliResult truncated = translate("A small house.\n" + long_line + "\n", "--on-long truncate");
  EXPECT_EQ(truncated.exit_code, 0) << truncated.err;
  EXPECT_EQ(count_lines(truncated.out), 2u);
  CliResult refused = translate("A small house.\n" + long_line + "\n", "--on-long error");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("<stdin>:2"), std::string::npos) << refused.err;
}

// Splitting ids: near-equal pieces, all ids kept in order; truncation keeps the first ones.
TEST(LongLines, IdsAreCutIntoNearEqualPiecesThatFit) {
  std::vector<int32_t> ids(23);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i + 3);
  FittedSource f = fit_ids(ids, 8, OnLong::split, "x");
  ASSERT_EQ(f.pieces.size(), 3u);
  EXPECT_EQ(f.pieces[0].size(), 8u);
  EXPECT_EQ(f.pieces[1].size(), 8u);
  EXPECT_EQ(f.pieces[2].size(), 7u);
  std::vector<int32_t> back;
  for (const auto& p : f.pieces) back.insert(back.end(), p.begin(), p.end());
  EXPECT_EQ(back, ids);
  FittedSource t = fit_ids(ids, 8, OnLong::truncate, "x");
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.pieces.at(0), std::vector<int32_t>(ids.begin(), ids.begin() + 8));
  EXPECT_THROW(fit_ids(ids, 8, OnLong::error, "x"), Error);
  EXPECT_EQ(fit_ids(std::vector<int32_t>(ids.begin(), ids.begin() + 8), 8, OnLong::error, "x").pieces.size(), 1u);
}

// score: a blank source line has nothing to condition on, in text as in --ids.
TEST_F(TextLines, ScoreRefusesABlankSourceNamingTheLine) {
  io::write_file_atomic(dir_ + "/src.txt", "A small house.\n   \n");
  io::write_file_atomic(dir_ + "/tgt.txt", "Ein kleines Haus.\nEin Haus.\n");
  const std::string err = dir_ + "/score.err";
  const int status = std::system((std::string(ATTN_BINARY) + " score --model " + dir_ + "/model --src " + dir_ +
                                  "/src.txt --tgt " + dir_ + "/tgt.txt > /dev/null 2>" + err).c_str());
  EXPECT_NE(status, 0);
  EXPECT_NE(io::read_file(err).find(dir_ + "/src.txt:2: blank source line"), std::string::npos) << io::read_file(err);
}

// score: a line longer than the model's 16 positions is an error naming the file, the line and
// both lengths (issue 50: the model's own position check named neither), source or target; a
// line that just fits is scored.
TEST_F(TextLines, ScoreRefusesALineLongerThanThePositionsNamingFileAndLine) {
  const std::string long_line = "The file could not be opened because the disk is full and the network is down again today.";
  const std::string err = dir_ + "/score_long.err";
  auto score = [&](const std::string& src, const std::string& tgt) {
    io::write_file_atomic(dir_ + "/long_src.txt", src);
    io::write_file_atomic(dir_ + "/long_tgt.txt", tgt);
    return std::system((std::string(ATTN_BINARY) + " score --model " + dir_ + "/model --src " + dir_ +
                        "/long_src.txt --tgt " + dir_ + "/long_tgt.txt > /dev/null 2>" + err).c_str());
  };
  EXPECT_NE(score("A house.\nA tree.\n", "Ein Haus.\n" + long_line + "\n"), 0);
  EXPECT_NE(io::read_file(err).find(dir_ + "/long_tgt.txt:2: "), std::string::npos) << io::read_file(err);
  EXPECT_NE(io::read_file(err).find("tokens and the bos), more than the model's max_len 16"), std::string::npos)
      << io::read_file(err);
  EXPECT_NE(score(long_line + "\nA tree.\n", "Ein Haus.\nEin Baum.\n"), 0);
  EXPECT_NE(io::read_file(err).find(dir_ + "/long_src.txt:1: "), std::string::npos) << io::read_file(err);
  EXPECT_NE(io::read_file(err).find("tokens and the eos), more than the model's max_len 16"), std::string::npos)
      << io::read_file(err);
  EXPECT_EQ(score("A house.\nA tree.\n", "Ein Haus.\nEin Baum.\n"), 0) << io::read_file(err);
}

}  // namespace
}  // namespace attn
