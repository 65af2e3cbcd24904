// The subcommands' flags through the attn binary: --help with an example on every subcommand, the
// shared flags checked alike everywhere, numbers that overflow their type or miss their range
// refused with a message naming the flag (or the config key) and a non-zero exit.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace attn {
namespace {

struct CliRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

CliRun run(const std::string& arguments) {
  std::string cmd = std::string(ATTN_BINARY) + " " + arguments + " 2>&1 < /dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Expects `arguments` to fail, its message naming each of `words`.
void expect_refused(const std::string& arguments, const std::vector<std::string>& words) {
  CliRun r = run(arguments);
  EXPECT_NE(r.exit_code, 0) << arguments << "\n" << r.output;
  for (const auto& w : words) EXPECT_NE(r.output.find(w), std::string::npos) << arguments << ": no '" << w << "' in\n" << r.output;
}

TEST(Flags, EverySubcommandHasHelpWithAnExample) {
  for (std::string c : {"demo", "train", "average", "import-torch", "export-torch", "translate", "score", "classify",
                        "eval", "bleu", "info"}) {
    CliRun r = run(c + " --help");
    EXPECT_EQ(r.exit_code, 0) << c << "\n" << r.output;
    EXPECT_NE(r.output.find("Usage: attn " + c), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("example:\n  attn " + c + " "), std::string::npos) << r.output;
  }
}

TEST(Flags, SharedFlagsAreCheckedAlikeEverywhere) {
  for (std::string c : {"translate --model m", "score --model m --src s --tgt t", "classify --model m",
                        "eval --model m --data d", "demo", "train"}) {
    expect_refused(c + " --threads 0", {"--threads", "1 .. 1024", "'0'"});
    expect_refused(c + " --threads 4294967297", {"--threads", "'4294967297'"});
  }
  for (std::string c : {"translate --model m", "score --model m --src s --tgt t", "classify --model m"}) {
    expect_refused(c + " --batch 0", {"--batch", "'0'"});
    expect_refused(c + " --batch 32.7", {"--batch", "'32.7'"});
    expect_refused(c + " --precision fp16", {"--precision", "unknown precision 'fp16'"});
  }
  expect_refused("translate --beam 2", {"--model"});
  expect_refused("translate --model m --bogus 1", {"--bogus"});
}

TEST(Flags, NumbersThatOverflowAreRefused) {
  expect_refused("translate --model m --beam 4294967297", {"--beam", "'4294967297'"});
  expect_refused("translate --model m --beam -1", {"--beam", "'-1'"});
  expect_refused("translate --model m --max-len 99999999999999999999", {"--max-len"});
  expect_refused("translate --model m --length-penalty nan", {"--length-penalty"});
  expect_refused("classify --model m --top-k 0x10", {"--top-k", "'0x10'"});
  expect_refused("average dir --last 0", {"--last"});
  expect_refused("demo --steps 2147483648", {"--steps"});
}

TEST(Flags, ConfigValuesAreCheckedByTheirKey) {
  expect_refused("train --set train.keep_checkpoints=4294967297", {"'train.keep_checkpoints'", "4294967297"});
  expect_refused("train --set train.max_tokens=32.7", {"'train.max_tokens'", "32.7"});
  expect_refused("train --set train.lr=0", {"'train.lr'"});
  expect_refused("train --set train.label_smoothing=1", {"'train.label_smoothing'"});
  expect_refused("train --max-steps 99999999999999999999", {"--max-steps", "'train.max_steps'"});
  expect_refused("train --max-minutes -1", {"--max-minutes", "'train.max_minutes'"});
  expect_refused("train --set task=classification --set model.dropout=-0.5", {"'model.dropout'"});
  CliRun r = run("train --help-config");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("train.max_tokens: 2048"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("train.checkpoint_minutes: 15"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace attn
