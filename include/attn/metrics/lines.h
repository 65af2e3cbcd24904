// Text files read the way sacreBLEU reads them, so that `attn bleu` and sacreBLEU score the same
// lines.
#pragma once

#include <string>
#include <vector>

namespace attn::metrics {

// Splits at '\n' only and rstrip()s each line (Python's Unicode whitespace, which also drops a
// '\r' before the '\n'); a last line without '\n' still counts. A line that is not valid UTF-8 is
// an attn::Error naming `name` and the line number.
std::vector<std::string> split_lines_as_sacrebleu(const std::string& text, const std::string& name);

}  // namespace attn::metrics
