// Where one HTTP/1.1 request ends in the bytes a connection has received (connection.h's event
// loop reads a request whole before a worker thread sees it): the request line and headers up to
// the blank line, then a body of Content-Length bytes or of chunks up to the last, empty one. Only
// what framing needs is read here (the header names Content-Length, Transfer-Encoding and Expect);
// cpp-httplib parses the request itself from the same bytes afterwards.
#pragma once

#include <cstddef>
#include <string>

namespace attn::serve {

struct Framing {
  enum class State {
    partial,        // more bytes are needed
    complete,       // bytes [0, end) are one request
    headers_too_large,  // no blank line within max_header_bytes (431)
    body_too_large,     // its body would pass max_body_bytes (413): the headers end at `end`
    bad,            // framing that cannot be read (400): a bad Content-Length, or both kinds of body
  };
  State state = State::partial;
  size_t start = 0;        // the request line's first byte (after any blank lines)
  size_t end = 0;          // complete: the request's last byte + 1; body_too_large: the headers' end
  size_t headers_end = 0;  // after the blank line (0 while the headers are incomplete)
  bool expect_continue = false;  // "Expect: 100-continue" (the client waits for it to send the body)
  size_t expect_line = 0, expect_length = 0;  // where that header line is in the bytes, CRLF included
};

// The request at the front of `in` (leading blank lines included: a client may send a CRLF after
// a body, which RFC 9112 says a server should ignore).
Framing frame_request(const std::string& in, size_t max_header_bytes, size_t max_body_bytes);

}  // namespace attn::serve
