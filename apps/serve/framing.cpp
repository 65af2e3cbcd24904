#include "framing.h"

#include <cctype>
#include <cstring>
#include <strings.h>

namespace attn::serve {
namespace {

// Whether in[at, at + n) is `name` followed by ':' (case-insensitive), and where its value starts.
bool header_named(const std::string& in, size_t at, size_t line_end, const char* name, size_t& value) {
  const size_t n = std::strlen(name);
  if (at + n >= line_end || in[at + n] != ':' || ::strncasecmp(in.data() + at, name, n) != 0) return false;
  value = at + n + 1;
  while (value < line_end && (in[value] == ' ' || in[value] == '\t')) ++value;
  return true;
}

std::string trimmed(const std::string& in, size_t from, size_t to) {
  while (to > from && (in[to - 1] == ' ' || in[to - 1] == '\t')) --to;
  return in.substr(from, to - from);
}

// The end of a chunked body starting at `at` (0: incomplete), -1 past `max` bytes, -2 on a chunk
// that cannot be read.
long long chunked_end(const std::string& in, size_t at, size_t max) {
  const size_t start = at;
  for (;;) {
    const size_t eol = in.find("\r\n", at);
    if (eol == std::string::npos) return in.size() - start > max ? -1 : 0;
    size_t size = 0, i = at;
    for (; i < eol && std::isxdigit(static_cast<unsigned char>(in[i])); ++i) {
      size = size * 16 + static_cast<size_t>(std::isdigit(static_cast<unsigned char>(in[i])) ? in[i] - '0'
                                                                                              : (in[i] | 0x20) - 'a' + 10);
      if (size > max) return -1;
    }
    if (i == at || (i < eol && in[i] != ';')) return -2;  // a chunk extension may follow ';'
    at = eol + 2;
    if (size == 0) {  // the last chunk, trailers, then a blank line
      for (;;) {
        const size_t t = in.find("\r\n", at);
        if (t == std::string::npos) return 0;
        if (t == at) return static_cast<long long>(t + 2);
        at = t + 2;
      }
    }
    if (at + size - start > max) return -1;
    if (in.size() < at + size + 2) return 0;
    if (in.compare(at + size, 2, "\r\n") != 0) return -2;
    at += size + 2;
  }
}

}  // namespace

Framing frame_request(const std::string& in, size_t max_header_bytes, size_t max_body_bytes) {
  Framing f;
  size_t start = 0;
  while (start + 1 < in.size() && in[start] == '\r' && in[start + 1] == '\n') start += 2;
  const size_t blank = in.find("\r\n\r\n", start);
  if (blank == std::string::npos || blank + 4 - start > max_header_bytes) {
    if (in.size() - start > max_header_bytes) f.state = Framing::State::headers_too_large;
    return f;
  }
  f.start = start;
  f.headers_end = blank + 4;
  bool has_length = false, chunked = false;
  size_t length = 0;
  for (size_t at = in.find("\r\n", start) + 2; at < blank + 2;) {
    const size_t eol = in.find("\r\n", at);
    size_t value = 0;
    if (header_named(in, at, eol, "Content-Length", value)) {
      const std::string v = trimmed(in, value, eol);
      size_t n = 0;
      bool ok = !v.empty() && v.size() <= 18;
      for (char c : v) {
        ok = ok && std::isdigit(static_cast<unsigned char>(c));
        n = n * 10 + static_cast<size_t>(c - '0');
      }
      if (!ok || (has_length && n != length)) {
        f.state = Framing::State::bad;
        return f;
      }
      has_length = true;
      length = n;
    } else if (header_named(in, at, eol, "Transfer-Encoding", value)) {
      chunked = chunked || ::strcasecmp(trimmed(in, value, eol).c_str(), "chunked") == 0;
      if (!chunked) {  // an encoding cpp-httplib would not undo: its length is unknown
        f.state = Framing::State::bad;
        return f;
      }
    } else if (header_named(in, at, eol, "Expect", value) && ::strcasecmp(trimmed(in, value, eol).c_str(), "100-continue") == 0) {
      f.expect_continue = true;
      f.expect_line = at;
      f.expect_length = eol + 2 - at;
    }
    at = eol + 2;
  }
  if (has_length && chunked) {  // a request that two readers could frame differently (smuggling)
    f.state = Framing::State::bad;
    return f;
  }
  if ((has_length && length > max_body_bytes)) {
    f.state = Framing::State::body_too_large;
    f.end = f.headers_end;
    return f;
  }
  if (chunked) {
    const long long end = chunked_end(in, f.headers_end, max_body_bytes);
    if (end == -2) {
      f.state = Framing::State::bad;
    } else if (end < 0) {
      f.state = Framing::State::body_too_large;
      f.end = f.headers_end;
    } else if (end > 0) {
      f.state = Framing::State::complete;
      f.end = static_cast<size_t>(end);
    }
    return f;
  }
  if (in.size() >= f.headers_end + length) {
    f.state = Framing::State::complete;
    f.end = f.headers_end + length;
  }
  return f;
}

}  // namespace attn::serve
