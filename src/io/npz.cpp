#include "attn/io/npz.h"

#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/io/mapped_file.h"
#include "attn/io/npy.h"
#include "attn/io/zip.h"

namespace attn::io {

std::map<std::string, Tensor> load_npz(const std::string& path) {
  std::shared_ptr<MappedFile> file = map_file(path);
  std::map<std::string, Tensor> out;
  for_each_zip_member(file->bytes(), path, [&](const std::string& name, std::string_view bytes) {
    std::string key = name;
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    check(!out.count(key), "npz ", path, ": member '", key, "' appears twice");
    out[key] = parse_npy(bytes, "npz " + path + ": member '" + key + "'");
    file->release(bytes);  // copied: the mapped pages need not count twice in the peak RSS
  });
  return out;
}

void save_npz(const std::string& path, const std::map<std::string, Tensor>& tensors) {
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto& [key, t] : tensors) {
    check(t.defined(), "save_npz ", path, ": tensor '", key, "' is undefined");
    members.emplace_back(key + ".npy", npy_bytes(t));
  }
  write_file_atomic(path, zip_stored(members));
}

}  // namespace attn::io
