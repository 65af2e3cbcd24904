#include "attn/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attn/error.h"

namespace attn::io {
namespace {

// Closes a file descriptor on scope exit unless released.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const char* p, size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    check(w > 0, "write_file_atomic: writing ", what, ": ", errno_text());
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// A fresh name beside `path`, created with O_EXCL so two writers never share it.
Fd create_temp_beside(const std::string& path, std::string& temp_path) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp_path = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return Fd(fd);
    if (errno != EEXIST) break;
  }
  fail("write_file_atomic: cannot create a temporary file beside ", path, " (", temp_path,
       "): ", errno_text());
}

void fsync_directory_of(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  check(d.fd >= 0, "write_file_atomic: cannot open directory ", dir.string(), " of ", path, ": ",
        errno_text());
  // Some file systems refuse fsync on directories (EINVAL); the rename is then as durable as
  // they make it.
  check(::fsync(d.fd) == 0 || errno == EINVAL, "write_file_atomic: fsync of directory ",
        dir.string(), " of ", path, ": ", errno_text());
}

}  // namespace

std::string read_file(const std::string& path) {
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  check(f.fd >= 0, "read_file: cannot open ", path, ": ", errno_text());
  struct stat st {};
  check(::fstat(f.fd, &st) == 0, "read_file: cannot stat ", path, ": ", errno_text());
  check(!S_ISDIR(st.st_mode), "read_file: ", path, " is a directory");
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(f.fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    check(r >= 0, "read_file: reading ", path, ": ", errno_text());
    if (r == 0) break;
    out.append(buf, static_cast<size_t>(r));
  }
  return out;
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  std::string temp_path;
  Fd f = create_temp_beside(path, temp_path);
  try {
    write_all(f.fd, bytes.data(), bytes.size(), temp_path);
    check(::fsync(f.fd) == 0, "write_file_atomic: fsync of ", temp_path, ": ", errno_text());
    check(::close(f.release()) == 0, "write_file_atomic: close of ", temp_path, ": ",
          errno_text());
    check(::rename(temp_path.c_str(), path.c_str()) == 0, "write_file_atomic: cannot rename ",
          temp_path, " to ", path, ": ", errno_text());
  } catch (...) {
    ::unlink(temp_path.c_str());
    throw;
  }
  fsync_directory_of(path);
}

}  // namespace attn::io
