// Plain text files of one sentence a line, as users bring them: read whole, split at '\n',
// checked to be UTF-8. A '\r' before the '\n' (Windows files) and a UTF-8 byte-order mark at
// the start are dropped; a last line without '\n' counts; a final '\n' does not start a line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

// The lines of `path`; invalid UTF-8 is an error naming path:line (1-based) and the byte.
std::vector<std::string> read_lines(const std::string& path);

// Splits text already in memory; `name` stands for the file in errors.
std::vector<std::string> split_lines(std::string_view text, const std::string& name);

// -1 when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above
// U+10FFFF), else the offset of the first byte of the first malformed sequence.
int64_t first_invalid_utf8(std::string_view s);

}  // namespace attn::data
