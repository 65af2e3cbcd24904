// Internal to src/metrics: the few pieces of Python's str semantics that sacreBLEU relies on,
// done on UTF-8 bytes: which code points str.split()/str.rstrip() treat as whitespace, splitting
// on them, and decoding to code points (chrF counts characters, not bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace attn::metrics::detail {

// Byte length of the Python whitespace code point that starts at s[i], or 0 if there is none.
// Python's str.isspace() set: \t \n \v \f \r, \x1c-\x1f, space, U+0085, U+00A0, U+1680,
// U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 (not U+200B, not U+FEFF).
inline size_t whitespace_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned b0 = byte(i);
  if ((b0 >= 0x09 && b0 <= 0x0D) || (b0 >= 0x1C && b0 <= 0x20)) return 1;
  if (b0 == 0xC2) return (byte(i + 1) == 0x85 || byte(i + 1) == 0xA0) ? 2 : 0;
  if (b0 == 0xE1) return (byte(i + 1) == 0x9A && byte(i + 2) == 0x80) ? 3 : 0;
  if (b0 == 0xE3) return (byte(i + 1) == 0x80 && byte(i + 2) == 0x80) ? 3 : 0;
  if (b0 == 0xE2) {
    unsigned b1 = byte(i + 1), b2 = byte(i + 2);
    if (b1 == 0x80) return (b2 <= 0x8A && b2 >= 0x80) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF ? 3 : 0;
    if (b1 == 0x81) return b2 == 0x9F ? 3 : 0;
  }
  return 0;
}

// Python's str.split() with no argument: runs of whitespace separate, no empty pieces.
inline void split_whitespace(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0, start = std::string_view::npos;
  while (i < s.size()) {
    size_t w = whitespace_length(s, i);
    if (w > 0) {
      if (start != std::string_view::npos) out.push_back(s.substr(start, i - start));
      start = std::string_view::npos;
      i += w;
    } else {
      if (start == std::string_view::npos) start = i;
      ++i;
    }
  }
  if (start != std::string_view::npos) out.push_back(s.substr(start));
}

// Python's str.rstrip() with no argument.
inline std::string_view rstrip_whitespace(std::string_view s) {
  size_t end = 0;  // one past the last byte that is not part of a whitespace code point
  for (size_t i = 0; i < s.size();) {
    size_t w = whitespace_length(s, i);
    if (w > 0) {
      i += w;
    } else {
      end = ++i;
      while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) end = ++i;
    }
  }
  return s.substr(0, end);
}

// Code points of a UTF-8 string with all whitespace removed (chrF's ''.join(line.split())).
// A byte that is not part of a well-formed sequence becomes one code point 0xDC00+byte, as
// Python's surrogateescape would (Python's strict decoder refuses such input outright).
inline void code_points_without_whitespace(std::string_view s, std::vector<uint32_t>& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    if (size_t w = whitespace_length(s, i)) {
      i += w;
      continue;
    }
    unsigned b0 = static_cast<unsigned char>(s[i]);
    size_t n = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
    uint32_t cp = n == 1 ? b0 : n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      unsigned b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMinForLength[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.push_back(cp);
      i += n;
    } else {
      out.push_back(0xDC00 + b0);
      i += 1;
    }
  }
}

// True when s is well-formed UTF-8 (what Python's strict decoder accepts): a malformed byte is
// the only way to get a code point in U+DC80..U+DCFF from the decoder above.
inline bool is_valid_utf8(std::string_view s) {
  std::vector<uint32_t> cps;
  code_points_without_whitespace(s, cps);
  for (uint32_t cp : cps)
    if (cp >= 0xDC80 && cp <= 0xDCFF) return false;
  return true;
}

}  // namespace attn::metrics::detail
