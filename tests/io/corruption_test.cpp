// Damaged files never crash a loader and never load as different numbers unnoticed: every
// truncation of the fixtures is refused with attn::Error, and of copies with random bytes flipped,
// those that still load hold exactly the original tensors unless a flip landed in data no checksum
// covers (only in files without one: the hand-written and PyTorch-written safetensors fixtures).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
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
using Tensors = std::map<std::string, Tensor>;
using Loader = Tensors (*)(const std::string&);

Tensors load_st(const std::string& p) { return load_safetensors(p); }
Tensors load_z(const std::string& p) { return load_npz(p); }

struct Case {
  std::string file;
  Loader load;
  bool safetensors;  // data section at [8 + N, end), N the header length
  bool data_checked;  // a checksum covers the data (attn's crc32, zip's CRC-32 per member)
};

// An attn-written file (with its crc32) beside the fixtures of other writers.
std::vector<Case> cases(const TempDir& dir) {
  std::string written = dir.file("attn.safetensors");
  save_safetensors(written, {{"w", Tensor::from_vector({0.5f, -1, 2, 3.25f, 7, 8}, {2, 3})},
                             {"b", Tensor::from_vector({1, 2, 3}, {3})},
                             {"ids", Tensor::from_ids({4, 5}, {2})}});
  return {{fixture("hand.safetensors"), load_st, true, false},
          {fixture("pylib.safetensors"), load_st, true, false},
          {written, load_st, true, true},
          {fixture("savez.npz"), load_z, false, true},
          {fixture("savez_compressed.npz"), load_z, false, true}};
}

// The tensors as (dtype, shape, bytes) records in a fixed order, names left out: a flip in a
// name may rename a tensor, which is no change to the numbers.
std::vector<std::string> contents(const Tensors& ts) {
  std::vector<std::string> out;
  for (const auto& [name, t] : ts) {
    Tensor c = t.contiguous();
    std::string r = std::string(dtype_name(t.dtype())) + shape_str(t.shape()) + ":";
    r.append(static_cast<const char*>(c.raw_data()), static_cast<size_t>(c.nbytes()));
    out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(IoCorruption, EveryTruncationIsRefused) {
  TempDir dir;
  for (const Case& c : cases(dir)) {
    std::string bytes = read_file(c.file), path = dir.file("truncated");
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

TEST(IoCorruption, RandomByteFlipsAreRefusedOrChangeNothingUnchecked) {
  TempDir dir;
  std::mt19937 rng(7);
  for (const Case& c : cases(dir)) {
    SCOPED_TRACE(c.file);
    std::string bytes = read_file(c.file), path = dir.file("damaged");
    const std::vector<std::string> original = contents(c.load(c.file));
    uint64_t header = 0;
    std::memcpy(&header, bytes.data(), 8);
    const size_t data_start = c.safetensors ? 8 + header : bytes.size();
    int loaded = 0, refused = 0, in_data = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::string damaged = bytes;
      bool hits_data = false;
      for (int k = 0; k < 3; ++k) {
        size_t at = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng);
        damaged[at] ^= static_cast<char>(1 << std::uniform_int_distribution<int>(0, 7)(rng));
        hits_data |= at >= data_start && damaged[at] != bytes[at];
      }
      in_data += hits_data;
      write_plain(path, damaged);
      try {
        std::vector<std::string> now = contents(c.load(path));
        ++loaded;
        // A flip in the key "crc32" itself leaves an attn file unchecked (a limit of the format:
        // the checksum is metadata); it then counts as a file without one.
        const bool checked = c.data_checked && (!c.safetensors || damaged.find("\"crc32\":\"") < data_start);
        if (checked) {
          EXPECT_FALSE(hits_data) << "a flip in checksummed data loaded (trial " << trial << ")";
          EXPECT_EQ(now, original) << "loaded with other numbers despite a checksum (trial " << trial << ")";
        } else {
          // Unchecked data: a flip there must show in the numbers (it is not hidden or repaired),
          // and a file damaged only in its header loads with the original numbers or not at all.
          EXPECT_EQ(now != original, hits_data) << "trial " << trial;
        }
      } catch (const attn::Error& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }  // anything else escapes and fails the test
    }
    EXPECT_GT(refused, 0);
    if (c.safetensors) {
      EXPECT_GT(in_data, 0) << "no trial reached the data section";
    }
    std::printf("%s: 300 damaged copies, %d loaded, %d refused, %d with data flipped\n", c.file.c_str(), loaded,
                refused, in_data);
  }
}

// One flipped bit in the data section of each safetensors case, 100 times: refused wherever a
// checksum covers the data, loaded with changed numbers (nothing hides it) where none does.
TEST(IoCorruption, DataFlipsAreCaughtExactlyWhereAChecksumIs) {
  TempDir dir;
  std::mt19937 rng(11);
  for (const Case& c : cases(dir)) {
    if (!c.safetensors) continue;
    SCOPED_TRACE(c.file);
    std::string bytes = read_file(c.file), path = dir.file("flipped");
    const std::vector<std::string> original = contents(c.load(c.file));
    uint64_t header = 0;
    std::memcpy(&header, bytes.data(), 8);
    ASSERT_LT(8 + header, bytes.size());
    int refused = 0;
    for (int trial = 0; trial < 100; ++trial) {
      std::string damaged = bytes;
      damaged[std::uniform_int_distribution<size_t>(8 + header, bytes.size() - 1)(rng)] ^=
          static_cast<char>(1 << std::uniform_int_distribution<int>(0, 7)(rng));
      write_plain(path, damaged);
      try {
        EXPECT_NE(contents(c.load(path)), original) << "trial " << trial;
      } catch (const attn::Error& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(refused, c.data_checked ? 100 : 0);
  }
}

}  // namespace
}  // namespace attn::io
