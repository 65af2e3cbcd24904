// The small part of the ZIP format that .npz needs. Reading: the central directory (with Zip64
// sizes and offsets, as numpy's zipfile may write them), members stored (method 0) or deflated
// (method 8, raw deflate through zlib), each checked against its CRC-32. Writing: stored members
// only, with correct CRC-32s; archives up to 4 GiB (no Zip64 on write).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::io {

// Calls visit(name, bytes) for every member in central-directory order. `bytes` is valid only
// during the call. `path` names the archive in error messages.
void for_each_zip_member(std::string_view archive, const std::string& path,
                         const std::function<void(const std::string&, std::string_view)>& visit);

// An archive of stored (uncompressed) members, in the given order.
std::string zip_stored(const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace attn::io
