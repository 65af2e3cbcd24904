#include "attn/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "attn/error.h"

namespace attn::io {

MappedFile::~MappedFile() {
  if (data != nullptr) ::munmap(data, size);
}

void MappedFile::release(std::string_view range) const {
  if (data == nullptr || range.data() < data || range.data() + range.size() > data + size) return;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data()), end = begin + range.size();
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
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
