#include "attn/metrics/lines.h"

#include <string_view>

#include "attn/error.h"
#include "unicode_text.h"

namespace attn::metrics {

std::vector<std::string> split_lines_as_sacrebleu(const std::string& text, const std::string& name) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    check(detail::is_valid_utf8(line), name, ":", lines.size() + 1, ": not valid UTF-8 text");
    lines.emplace_back(detail::rstrip_whitespace(line));
    start = end + 1;
  }
  return lines;
}

}  // namespace attn::metrics
