// read_file / write_file_atomic, including the crash test: a writer killed with SIGKILL at random
// moments never leaves a half-written file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "attn/io/atomic_file.h"
#include "io_test_util.h"

namespace attn::io {
namespace {

using testing::expect_error;
using testing::TempDir;
using namespace std::string_literals;

TEST(AtomicFile, WritesReplacesAndLeavesNoTempFiles) {
  TempDir dir;
  std::string path = dir.file("out.bin");
  std::string first(100000, 'a'), second = "short\0with nul"s;
  write_file_atomic(path, first);
  EXPECT_EQ(read_file(path), first);
  write_file_atomic(path, second);
  EXPECT_EQ(read_file(path), second);
  write_file_atomic(path, "");
  EXPECT_EQ(read_file(path), "");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFile, RelativePathInCurrentDirectory) {
  TempDir dir;
  auto old = std::filesystem::current_path();
  std::filesystem::current_path(dir.path);
  write_file_atomic("plain.txt", "hello");
  std::filesystem::current_path(old);
  EXPECT_EQ(read_file(dir.file("plain.txt")), "hello");
}

TEST(AtomicFile, ErrorsNameThePath) {
  TempDir dir;
  std::string missing = dir.file("no_such_file.bin");
  expect_error([&] { read_file(missing); }, {missing});
  expect_error([&] { read_file(dir.path.string()); }, {dir.path.string(), "directory"});
  std::string in_missing_dir = dir.file("no_dir/x.bin");
  expect_error([&] { write_file_atomic(in_missing_dir, "x"); }, {in_missing_dir});
  EXPECT_TRUE(dir.listing().empty());
}

// The content of version k: distinct bytes and a distinct length, so that any mix of two
// versions, or a truncated one, differs from both.
std::string version_bytes(int k) {
  const size_t size = 20'000'000 + 13 * k;
  std::string s(size, '\0');
  for (size_t i = 0; i < size; i += 4096) s[i] = static_cast<char>('A' + k);
  std::fill(s.begin(), s.begin() + 64, static_cast<char>('a' + k));
  std::fill(s.end() - 64, s.end(), static_cast<char>('a' + k));
  return s;
}

TEST(AtomicFile, KillNineNeverLeavesAHalfWrittenFile) {
  TempDir dir;
  std::string path = dir.file("model.bin");
  const std::string v0 = version_bytes(0), v1 = version_bytes(1);
  write_file_atomic(path, v0);
  std::mt19937 rng(1234);
  const int kills = 5;
  int saw[2] = {0, 0};
  for (int round = 0; round < kills; ++round) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // the writer: alternates versions until killed
      try {
        for (int k = 1;; k ^= 1) write_file_atomic(path, k ? v1 : v0);
      } catch (...) {
      }
      ::_exit(1);
    }
    int delay_ms = std::uniform_int_distribution<int>(30, 250)(rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "writer exited by itself (status " << status << ")";
    std::string now = read_file(path);
    bool is0 = now == v0, is1 = now == v1;
    EXPECT_TRUE(is0 || is1) << "round " << round << " after " << delay_ms << " ms: file of "
                            << now.size() << " bytes is neither complete version";
    ++saw[is1 ? 1 : 0];
    // A kill mid-write may leave the writer's temporary file; never a damaged target.
    for (const std::string& name : dir.listing())
      if (name != "model.bin") std::filesystem::remove(dir.file(name));
  }
  std::printf("kill -9 rounds: %d, file was version 0 %d times, version 1 %d times\n", kills,
              saw[0], saw[1]);
}

}  // namespace
}  // namespace attn::io
