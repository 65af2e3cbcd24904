// The fuzz targets' kept inputs, replayed with the ordinary compiler: every seed of fuzz/corpus and
// every input that once made a target fail (fuzz/regressions/<target>/) goes through the same
// entry point the fuzzer drives (fuzz/targets.h). Each must be refused or read cleanly: a crash or
// an escaping exception fails this test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "targets.h"

namespace attn::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs(const std::string& folder, const std::string& target) {
  std::vector<fs::path> out;
  fs::path dir = fs::path(ATTN_FUZZ_DIR) / folder / target;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void replay(const std::string& folder) {
  for (const Target& t : targets()) {
    for (const fs::path& p : inputs(folder, t.name)) {
      SCOPED_TRACE(p.string());
      EXPECT_NO_THROW(t.run(bytes_of(p)));
    }
  }
}

TEST(FuzzReplay, EveryTargetHasSeeds) {
  for (const Target& t : targets()) EXPECT_FALSE(inputs("corpus", t.name).empty()) << t.name;
}

TEST(FuzzReplay, Seeds) { replay("corpus"); }

TEST(FuzzReplay, Regressions) { replay("regressions"); }

}  // namespace
}  // namespace attn::fuzz
