// Plain text files of one sentence a line, as users bring them: read whole, split at '\n',
// checked to be UTF-8. A '\r' before the '\n' (Windows files) and a UTF-8 byte-order mark at
// the start are dropped; a last line without '\n' counts; a final '\n' does not start a line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

// An input file a command reads must not be a directory: std::ifstream opens one and then reads
// nothing, which made translate/score/classify exit 0 with no output. Errors name `what` (a flag
// or role) and the path.
void check_not_directory(const std::string& path, const std::string& what);
// The same for standard input (a shell's `< DIR`).
void check_stdin_not_directory();

// The lines of `path` (not a directory); invalid UTF-8 is an error naming path:line (1-based) and the byte.
std::vector<std::string> read_lines(const std::string& path);

// Splits text already in memory; `name` stands for the file in errors.
std::vector<std::string> split_lines(std::string_view text, const std::string& name);

// A line read from a stream (standard input), made as read_lines makes a file's line `number`
// (1-based): the '\r' of a Windows line end dropped, and on line 1 a byte-order mark; invalid UTF-8
// is an error naming name:number, the byte and its column.
void clean_stream_line(std::string& line, int64_t number, const std::string& name);

// A blank line (empty, or only spaces and tabs) holds no sentence. Every command treats it alike:
// translate and classify write an empty line for it (output line N stays input line N); score
// refuses a blank source line (nothing to condition on) and scores a blank target as eos alone.
bool is_blank(std::string_view line);

// -1 when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above
// U+10FFFF), else the offset of the first byte of the first malformed sequence.
int64_t first_invalid_utf8(std::string_view s);

}  // namespace attn::data
