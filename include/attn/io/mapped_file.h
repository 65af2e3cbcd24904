// A read-only view of a whole file through mmap. Loaders hand out tensors that point into the
// mapping and hold a shared_ptr to it, so the file is read lazily by the kernel and never copied.
// The mapping is private copy-on-write: writing into a borrowed tensor changes the process's
// copy of the page, never the file.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace attn::io {

struct MappedFile {
  std::string path;
  char* data = nullptr;  // nullptr for an empty file
  size_t size = 0;

  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const { return {data, size}; }

  // Gives the pages that lie wholly inside `range` (a part of bytes()) back to the system, so that
  // the process no longer counts them: for a loader that has copied them out. Reading them again
  // reads the file (or zeros where a borrowed tensor had written). A range elsewhere is ignored.
  void release(std::string_view range) const;
};

// Maps `path` whole; throws attn::Error naming the path if it cannot be opened or mapped.
std::shared_ptr<MappedFile> map_file(const std::string& path);

}  // namespace attn::io
