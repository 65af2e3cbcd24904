// attn's one exception type. Library code throws it with a message that carries the actual
// values ("embedding: id 9000 out of range for vocabulary 8000"); main() catches it, prints the
// message and exits non-zero.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace attn {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Builds the message only when it is needed.
template <typename... Args>
inline void check(bool ok, Args&&... message_parts) {
  if (ok) return;
  std::ostringstream s;
  (s << ... << std::forward<Args>(message_parts));
  throw Error(s.str());
}

template <typename... Args>
[[noreturn]] inline void fail(Args&&... message_parts) {
  std::ostringstream s;
  (s << ... << std::forward<Args>(message_parts));
  throw Error(s.str());
}

}  // namespace attn
