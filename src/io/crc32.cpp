#include "attn/io/crc32.h"

#include <zlib.h>

#include <algorithm>

namespace attn::io {

uint32_t crc32_of(std::string_view bytes, uint32_t crc) {
  uLong c = crc;
  for (size_t i = 0; i < bytes.size();) {  // zlib takes at most 4 GiB a call
    uInt n = static_cast<uInt>(std::min<size_t>(bytes.size() - i, size_t{1} << 30));
    c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data() + i), n);
    i += n;
  }
  return static_cast<uint32_t>(c);
}

}  // namespace attn::io
