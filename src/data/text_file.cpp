// Reading one-sentence-a-line text files, with a strict UTF-8 check.
#include "attn/data/text_file.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attn/error.h"

namespace attn::data {

int64_t first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return static_cast<int64_t>(i);  // continuation byte or 0xF8..0xFF as a lead
    }
    if (i + len > n) return static_cast<int64_t>(i);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return static_cast<int64_t>(i);
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return static_cast<int64_t>(i);
    i += len;
  }
  return -1;
}

namespace {

void check_utf8(std::string_view line, int64_t number, const std::string& name) {
  const int64_t bad = first_invalid_utf8(line);
  if (bad < 0) return;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(line[bad]));
  fail(name, ":", number, ": invalid UTF-8 (byte ", byte, " at column ", bad + 1, ")");
}

}  // namespace

std::vector<std::string> split_lines(std::string_view text, const std::string& name) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    check_utf8(line, static_cast<int64_t>(lines.size()) + 1, name);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

void clean_stream_line(std::string& line, int64_t number, const std::string& name) {
  if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  check_utf8(line, number, name);
}

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

void check_not_directory(const std::string& path, const std::string& what) {
  std::error_code ec;
  check(!std::filesystem::is_directory(path, ec), what, " ", path, " is a directory, not a file of lines");
}

void check_stdin_not_directory() {
  struct stat st {};
  check(fstat(0, &st) != 0 || !S_ISDIR(st.st_mode), "standard input is a directory, not a file of lines");
}

std::vector<std::string> read_lines(const std::string& path) {
  check_not_directory(path, "text file");
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot open text file ", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  check(!in.bad(), "error reading text file ", path);
  return split_lines(buffer.str(), path);
}

}  // namespace attn::data
