// attn translate's decoding options end to end (docs/decoding.md), on models imported from the
// torch_ref.py fixtures: sampling reproducible across --threads, --batch and --batch-tokens;
// --prefix against PyTorch's greedy fed the prefix; ensembles (translate and score) against a
// PyTorch ensemble (tests/decode/make_decode_fixtures.py); --batch-tokens and --input/--output give
// the default's output in input order; bad input is an error naming the flag or file line.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "attn/decode/shortlist.h"
#include "decode_fixture.h"

namespace attn {
namespace {

using testing::fixture_dir;
using testing::fixture_lines;

struct CliRun {
  int exit_code;
  std::string out, err;
};

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string decode_file(const std::string& name) { return std::string(ATTN_TEST_DATA) + "/decode/" + name; }

class DecodeOptionsCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("attn_decode_options_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    for (const char* name : {"post_shared_l2_h4", "pre_shared_l3_h2"}) {
      CliRun r = run("import-torch " + quote(fixture_dir(name)) + " " + quote((dir_ / name).string()));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static CliRun run(const std::string& arguments) {
    const std::string err_path = (dir_ / "stderr.txt").string();
    const std::string cmd = std::string(ATTN_BINARY) + " " + arguments + " 2>" + quote(err_path);
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return {-1, "", "popen failed"};
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, slurp(err_path)};
  }
  static std::string a() { return quote((dir_ / "post_shared_l2_h4").string()); }
  static std::string b() { return quote((dir_ / "pre_shared_l3_h2").string()); }
  static std::string src() { return quote(fixture_dir("post_shared_l2_h4") + "/src.txt"); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static std::string translate(const std::string& flags) {
    CliRun r = run("translate --ids --model " + a() + " " + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << ": " << r.err;
    return r.out;
  }

  static inline std::filesystem::path dir_;
};

// n-best lines "i ||| ids ||| score": the "i ||| ids" parts, and the scores.
std::pair<std::vector<std::string>, std::vector<double>> nbest(const std::string& out) {
  std::pair<std::vector<std::string>, std::vector<double>> parts;
  std::istringstream s(out);
  for (std::string line; std::getline(s, line);) {
    const size_t at = line.rfind(" ||| ");
    parts.first.push_back(line.substr(0, at));
    parts.second.push_back(std::stod(line.substr(at + 5)));
  }
  return parts;
}

// The same samples; the scores (sums of float log-probs, printed to 6 decimals) may differ in the
// last digit, as the products' float sums are blocked by batch shape.
void expect_same_samples(const std::string& got, const std::string& expected, const std::string& what) {
  const auto g = nbest(got), e = nbest(expected);
  EXPECT_EQ(g.first, e.first) << what;
  ASSERT_EQ(g.second.size(), e.second.size()) << what;
  for (size_t i = 0; i < g.second.size(); ++i) EXPECT_NEAR(g.second[i], e.second[i], 1e-5) << what;
}

TEST_F(DecodeOptionsCli, SamplingIsReproducibleWhateverThreadsAndBatches) {
  const std::string sampling = "--max-len 20 --sampling-topp 0.95 --sampling-temperature 1.3 --n-best 2 --seed 5 ";
  const std::string base = translate(sampling + "--threads 1 --batch 1 < " + src());
  EXPECT_EQ(nbest(base).first.size(), 48u);
  expect_same_samples(translate(sampling + "--threads 2 --batch 1 < " + src()), base, "threads 2");
  expect_same_samples(translate(sampling + "--threads 1 --batch 32 < " + src()), base, "batch 32");
  expect_same_samples(translate(sampling + "--threads 2 --batch-tokens 20 < " + src()), base, "batch-tokens 20");
  const std::string other = translate("--max-len 20 --sampling-topp 0.95 --sampling-temperature 1.3 --n-best 2 --seed 6 < " + src());
  EXPECT_NE(nbest(other).first, nbest(base).first);
  // top-k 1 is greedy: torch_ref.py's greedy.txt.
  std::string greedy;
  for (const auto& l : fixture_lines("post_shared_l2_h4", "greedy.txt")) greedy += l + "\n";
  EXPECT_EQ(translate("--max-len 20 --beam 1 --sampling-topk 1 < " + src()), greedy);
}

TEST_F(DecodeOptionsCli, PrefixContinuesAsPyTorch) {
  const std::string out = translate("--beam 1 --max-len 20 --prefix " + quote(decode_file("prefixes.txt")) + " < " + src());
  EXPECT_EQ(out, slurp(decode_file("prefix_greedy.txt")));
  // One prefix line short: an error naming the file.
  std::ofstream(path("short.txt")) << "5\n";
  CliRun r = run("translate --ids --model " + a() + " --prefix " + quote(path("short.txt")) + " < " + src());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("short.txt"), std::string::npos) << r.err;
}

TEST_F(DecodeOptionsCli, EnsembleEqualsPyTorch) {
  EXPECT_EQ(translate("--model " + b() + " --beam 1 --max-len 20 < " + src()), slurp(decode_file("ensemble_greedy.txt")));
  EXPECT_EQ(translate("--model " + b() + " --weights 0.6,0.4 --beam 4 --max-len 20 < " + src()),
            slurp(decode_file("ensemble_beam4.txt")));
  CliRun s = run("score --ids --model " + a() + " --model " + b() + " --weights 0.6,0.4 --src " + src() + " --tgt " +
                 quote(fixture_dir("post_shared_l2_h4") + "/tgt.txt"));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::istringstream got(s.out), expected(slurp(decode_file("ensemble_score.txt")));
  int n = 0;
  for (double g, e; got >> g && expected >> e; ++n) EXPECT_NEAR(g, e, 1e-3) << "pair " << n + 1;
  EXPECT_EQ(n, 24);
  CliRun bad = run("translate --ids --model " + a() + " --model " + b() + " --weights 0.6 < " + src());
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--weights"), std::string::npos) << bad.err;
}

TEST_F(DecodeOptionsCli, BatchTokensAndFilesGiveTheDefaultOutput) {
  const std::string base = translate("--beam 4 --max-len 20 < " + src());
  for (const char* tokens : {"1", "7", "30", "1000"})
    EXPECT_EQ(translate("--beam 4 --max-len 20 --batch-tokens " + std::string(tokens) + " < " + src()), base) << tokens;
  EXPECT_EQ(translate("--beam 4 --max-len 20 --input " + src() + " --output " + quote(path("out.txt"))), "");
  EXPECT_EQ(slurp(path("out.txt")), base);
}

// attn shortlist + translate --shortlist: every output token lies within the lists of the line's
// source pieces and the frequent ones, and the outputs do not depend on the batching. (A list of every piece
// changing nothing is shown in shortlist_test.cpp; a list made from a corpus leaves out the pieces
// it never saw, so it restricts.)
TEST_F(DecodeOptionsCli, ShortlistRestrictsTheOutputLayer) {
  const std::string tgt = quote(fixture_dir("post_shared_l2_h4") + "/tgt.txt");
  const std::string base = translate("--beam 4 --max-len 20 < " + src());
  CliRun small = run("shortlist --ids --model " + a() + " --corpus " + src() + " " + tgt + " --top-k 2 --frequent 3 "
                     "--output " + quote(path("small.safetensors")));
  ASSERT_EQ(small.exit_code, 0) << small.err;
  const std::string out = translate("--beam 4 --max-len 20 --batch 1 --shortlist " + quote(path("small.safetensors")) +
                                    " < " + src());
  EXPECT_NE(out, base);
  // Each line renormalised over its own list: the same outputs whatever the batch.
  const std::string list_flag = "--shortlist " + quote(path("small.safetensors"));
  EXPECT_EQ(translate("--beam 4 --max-len 20 --batch 32 " + list_flag + " < " + src()), out);
  EXPECT_EQ(translate("--beam 4 --max-len 20 --batch-tokens 20 " + list_flag + " < " + src()), out);
  // The lists, as the library reads them, and each output line checked against its own union.
  const Shortlist list = load_shortlist(path("small.safetensors"), 48, 48);
  const auto sources = testing::fixture_ids("post_shared_l2_h4", "src.txt");
  std::istringstream lines(out);
  size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    ASSERT_LT(n, sources.size());
    const std::vector<int32_t> allowed = shortlist_vocabulary(list, {sources[n]}, {{2}}, 48);
    std::istringstream ids(line);
    for (int32_t id; ids >> id;)
      EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), id)) << "line " << n + 1 << ": " << id;
  }
  EXPECT_EQ(n, sources.size());
  CliRun bad = run("translate --ids --model " + a() + " --shortlist " + src() + " < " + src());
  EXPECT_NE(bad.exit_code, 0);
}

// Outputs stopped at the maximum length are counted in one warning naming their first lines, and
// marked "finished": false in JSON lines, the same ones. The fixture model repeats itself, so
// even 40 tokens leave some cut off; 4 with --min-len 4 leave none room to end.
TEST_F(DecodeOptionsCli, OutputsCutOffAtTheLimitAreReported) {
  const size_t lines = fixture_lines("post_shared_l2_h4", "src.txt").size();
  auto warned = [](const std::string& err) {
    const size_t at = err.find("warning: ");
    return at == std::string::npos ? size_t{0} : static_cast<size_t>(std::stoul(err.substr(at + 9)));
  };
  auto unfinished = [](const std::string& jsonl) {
    size_t n = 0;
    for (size_t at = jsonl.find("\"finished\":false"); at != std::string::npos; at = jsonl.find("\"finished\":false", at + 1))
      ++n;
    return n;
  };
  for (const char* lengths : {"--min-len 4 --max-len 4", "--max-len 40"}) {
    const std::string flags = "translate --ids --model " + a() + " --beam 1 " + lengths;
    const CliRun text = run(flags + " < " + src());
    const CliRun json = run(flags + " --output-format jsonl < " + src());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(warned(text.err), unfinished(json.out)) << lengths << ": " << text.err;
    if (std::string(lengths).find("min-len") != std::string::npos) {
      EXPECT_NE(text.err.find("warning: " + std::to_string(lines) + " of " + std::to_string(lines) +
                              " outputs stopped at the maximum length without ending (lines 1, 2, 3"),
                std::string::npos) << text.err;
    } else {
      EXPECT_LT(unfinished(json.out), lines) << json.out;
      EXPECT_NE(json.out.find("\"finished\":true"), std::string::npos) << json.out;
    }
  }
}

// CTranslate2's sampling_topk: 1 (the default --help shows) leaves the beam search as it is, with
// or without --beam 4; 0 samples from the whole distribution (beam 1). Issue 50: the help said 0
// was the default, and giving it turned sampling on and beam 4 into 1.
TEST_F(DecodeOptionsCli, SamplingTopkOneIsTheDefaultAndKeepsTheBeam) {
  const std::string beam = translate("--max-len 20 < " + src());
  EXPECT_EQ(translate("--max-len 20 --sampling-topk 1 < " + src()), beam);
  EXPECT_EQ(translate("--max-len 20 --sampling-topk 1 --beam 4 --n-best 2 < " + src()),
            translate("--max-len 20 --beam 4 --n-best 2 < " + src()));
  CliRun help = run("translate --help");
  const std::string text = help.out + help.err;
  EXPECT_NE(text.find("--sampling-topk N=1 "), std::string::npos) << text;
  EXPECT_NE(run("translate --ids --model " + a() + " --sampling-topk 0 --beam 4 < " + src()).exit_code, 0);
}

// A directory as input is an error naming it (issue 50: std::ifstream opened it, read nothing, and
// translate and score exited 0 with no output).
TEST_F(DecodeOptionsCli, DirectoryInputIsAnErrorNamingIt) {
  const std::string dir = path("a_directory");
  std::filesystem::create_directories(dir);
  for (const std::string& args : {"translate --ids --model " + a() + " --input " + quote(dir),
                                  "translate --ids --model " + a() + " < " + quote(dir),
                                  "translate --ids --model " + a() + " --prefix " + quote(dir) + " < " + src(),
                                  "score --ids --model " + a() + " --src " + quote(dir) + " --tgt " + quote(dir)}) {
    CliRun r = run(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << args << ": " << r.err;
  }
}

TEST_F(DecodeOptionsCli, BadCombinationsAreErrors) {
  for (const char* flags : {"--sampling-topk 5 --beam 4", "--max-len 10 --max-len-a 2", "--sampling-topp 0",
                            "--repetition-penalty 0"}) {
    CliRun r = run("translate --ids --model " + a() + " " + flags + " < " + src());
    EXPECT_NE(r.exit_code, 0) << flags;
    EXPECT_FALSE(r.err.empty()) << flags;
  }
}

}  // namespace
}  // namespace attn
