// `attn bleu` end to end: the binary scores the fixture files and prints exactly what the
// sacrebleu command line prints for them (signature removed), reports mismatched line counts
// with file:line, and has --help.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "metrics_fixture.h"

namespace attn::metrics {
namespace {

using testing::expected;
using testing::fixture_lines;
using testing::fixture_path;

struct CliRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

CliRun run_attn(const std::string& arguments) {
  std::string cmd = std::string(ATTN_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << cmd;
  if (!pipe) return {-1, ""};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string shell_quote(const std::string& path) { return "'" + path + "'"; }

TEST(BleuCli, PrintsWhatSacrebleuPrints) {
  CliRun r = run_attn("bleu --ref " + shell_quote(fixture_path("ref.de")) + " --chrf < " +
                   shell_quote(fixture_path("hyp.de")));
  std::printf("attn bleu:\n%s", r.output.c_str());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, expected()["cli_one_ref"].get<std::string>());
}

TEST(BleuCli, TwoReferenceFilesAndHypFile) {
  CliRun r = run_attn("bleu --ref " + shell_quote(fixture_path("ref.de")) + " --ref " +
                   shell_quote(fixture_path("ref2.de")) + " --hyp " + shell_quote(fixture_path("hyp.de")) +
                   " --chrf");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, expected()["cli_two_refs"].get<std::string>());
}

TEST(BleuCli, DifferentLineCountsNameFileAndLine) {
  auto hyps = fixture_lines("hyp.de");
  auto dir = std::filesystem::temp_directory_path() / ("attn_bleu_cli_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string short_hyp = (dir / "short.de").string();
  {
    std::ofstream out(short_hyp, std::ios::binary);
    for (size_t i = 0; i + 1 < hyps.size(); ++i) out << hyps[i] << '\n';
  }
  std::string ref = fixture_path("ref.de");
  CliRun r = run_attn("bleu --ref " + shell_quote(ref) + " < " + shell_quote(short_hyp));
  std::printf("%s", r.output.c_str());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("<stdin> has " + std::to_string(hyps.size() - 1) + " lines"),
            std::string::npos);
  EXPECT_NE(r.output.find(ref + ":" + std::to_string(hyps.size())), std::string::npos);

  CliRun missing = run_attn("bleu < " + shell_quote(short_hyp));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("--ref"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(BleuCli, Help) {
  CliRun r = run_attn("bleu --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--ref"), std::string::npos);
  EXPECT_NE(r.output.find("--chrf"), std::string::npos);
}

}  // namespace
}  // namespace attn::metrics
