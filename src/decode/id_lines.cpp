#include "attn/decode/id_lines.h"

#include <cerrno>
#include <cstdlib>

#include "attn/error.h"

namespace attn {

std::vector<int32_t> parse_ids(const std::string& line, int64_t vocab, const std::string& where) {
  std::vector<int32_t> ids;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i == line.size()) break;
    size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') ++end;
    std::string word = line.substr(i, end - i);
    char* stop = nullptr;
    errno = 0;
    long long id = std::strtoll(word.c_str(), &stop, 10);
    check(*stop == '\0' && errno == 0, where, ": '", word, "' is not a token id (expected integers separated by spaces)");
    check(id >= 0 && id < vocab, where, ": token id ", id, " out of range for vocabulary ", vocab);
    ids.push_back(static_cast<int32_t>(id));
    i = end;
  }
  return ids;
}

void check_ids(const std::vector<int32_t>& ids, int64_t vocab, const std::string& where) {
  for (int32_t id : ids) check(id >= 0 && id < vocab, where, ": token id ", id, " out of range for vocabulary ", vocab);
}

std::string format_ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(ids[i]);
  }
  return out;
}

}  // namespace attn
