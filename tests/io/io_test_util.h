// Helpers for the io tests: a scratch directory removed at the end of each test, and a check
// that a call throws attn::Error whose message names what it should.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "attn/error.h"

namespace attn::io::testing {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("attn_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// Runs `call`, which must throw attn::Error with every one of `parts` in its message.
inline void expect_error(const std::function<void()>& call, const std::vector<std::string>& parts) {
  try {
    call();
  } catch (const attn::Error& e) {
    std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "message lacks \"" << p << "\": " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-attn exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "did not throw (expected an error mentioning \"" << (parts.empty() ? "" : parts[0]) << "\")";
}

// A plain (non-atomic, no fsync) write, for tests that write many files.
// The old file is removed first: truncating it in place can make the file system flush it.
inline void write_plain(const std::string& path, const std::string& bytes) {
  std::filesystem::remove(path);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

inline std::string fixture(const std::string& name) {
  return std::string(ATTN_TEST_DATA) + "/io/" + name;
}

}  // namespace attn::io::testing
