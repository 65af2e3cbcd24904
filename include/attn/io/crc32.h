// CRC-32 (ISO-HDLC, as zip and gzip use it), through zlib.
#pragma once

#include <cstdint>
#include <string_view>

namespace attn::io {

// The CRC-32 of `bytes`; pass the result of the previous part as `crc` to continue over several
// parts (crc32_of(b, crc32_of(a)) == crc32_of(a + b)).
uint32_t crc32_of(std::string_view bytes, uint32_t crc = 0);

}  // namespace attn::io
