// Damaged files never crash a loader: every truncation of the fixtures is refused with attn::Error,
// and random byte flips either load or are refused with attn::Error (run under ASan to see more).
#include <gtest/gtest.h>

#include <random>

#include "attn/io/atomic_file.h"
#include "attn/io/npz.h"
#include "attn/io/safetensors.h"
#include "io_test_util.h"

namespace attn::io {
namespace {

using testing::fixture;
using testing::TempDir;
using testing::write_plain;
using Loader = void (*)(const std::string&);

void load_st(const std::string& p) { load_safetensors(p); }
void load_z(const std::string& p) { load_npz(p); }

struct Case {
  const char* file;
  Loader load;
};
const Case kCases[] = {{"hand.safetensors", load_st}, {"pylib.safetensors", load_st},
                       {"savez.npz", load_z}, {"savez_compressed.npz", load_z}};

TEST(IoCorruption, EveryTruncationIsRefused) {
  TempDir dir;
  for (const Case& c : kCases) {
    std::string bytes = read_file(fixture(c.file)), path = dir.file(c.file);
    int refused = 0;
    for (size_t n = 0; n < bytes.size(); ++n) {
      write_plain(path, bytes.substr(0, n));
      try {
        c.load(path);
        ADD_FAILURE() << c.file << " truncated to " << n << " of " << bytes.size() << " bytes loaded";
      } catch (const attn::Error& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(refused, static_cast<int>(bytes.size())) << c.file;
  }
}

TEST(IoCorruption, RandomByteFlipsLoadOrThrowAttnError) {
  TempDir dir;
  std::mt19937 rng(7);
  for (const Case& c : kCases) {
    std::string bytes = read_file(fixture(c.file)), path = dir.file(c.file);
    int loaded = 0, refused = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::string damaged = bytes;
      for (int k = 0; k < 3; ++k)
        damaged[std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng)] ^=
            static_cast<char>(1 << std::uniform_int_distribution<int>(0, 7)(rng));
      write_plain(path, damaged);
      try {
        c.load(path);
        ++loaded;
      } catch (const attn::Error&) {
        ++refused;
      }  // anything else escapes and fails the test
    }
    std::printf("%s: 300 damaged copies, %d loaded, %d refused\n", c.file, loaded, refused);
  }
}

}  // namespace
}  // namespace attn::io
