#include "attn/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attn/error.h"

namespace attn::io {

MappedFile::~MappedFile() {
  if (data != nullptr) ::munmap(data, size);
}

std::shared_ptr<MappedFile> map_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    int e = errno;
    ::close(fd);
    fail("cannot map ", path, ": ", S_ISDIR(st.st_mode) ? "is a directory" : std::strerror(e));
  }
  auto m = std::make_shared<MappedFile>();
  m->path = path;
  m->size = static_cast<size_t>(st.st_size);
  if (m->size > 0) {
    // PROT_WRITE + MAP_PRIVATE: borrowed tensors may be written in place (copy-on-write pages);
    // the file itself is never modified.
    void* p = ::mmap(nullptr, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int e = errno;
    ::close(fd);
    check(p != MAP_FAILED, "cannot mmap ", path, " (", m->size, " bytes): ", std::strerror(e));
    m->data = static_cast<char*>(p);
  } else {
    ::close(fd);
  }
  return m;
}

}  // namespace attn::io
