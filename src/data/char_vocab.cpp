#include "attn/data/char_vocab.h"

#include <algorithm>
#include <map>

#include "attn/data/text_file.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"

namespace attn::data {
namespace {

// Bytes of the UTF-8 sequence starting with lead byte c (the text is validated on reading).
size_t utf8_length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) return 2;
  if ((c >> 4) == 0xE) return 3;
  if ((c >> 3) == 0x1E) return 4;
  return 1;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

CharVocab with_reserved(const std::string& level) {
  CharVocab v;
  v.level = level;
  v.tokens = {"<PAD>", "<UNK>", "<CLS>"};
  for (int32_t i = 0; i < 3; ++i) v.ids[v.tokens[i]] = i;
  return v;
}

}  // namespace

std::vector<std::string> split_tokens(std::string_view text, const std::string& level) {
  std::vector<std::string> out;
  if (level == "char") {
    for (size_t i = 0; i < text.size();) {
      size_t n = std::min(utf8_length(static_cast<unsigned char>(text[i])), text.size() - i);
      out.emplace_back(text.substr(i, n));
      i += n;
    }
  } else if (level == "word") {
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && is_space(text[i])) ++i;
      size_t start = i;
      while (i < text.size() && !is_space(text[i])) ++i;
      if (i > start) out.emplace_back(text.substr(start, i - start));
    }
  } else {
    fail("token level must be char or word, got '", level, "'");
  }
  return out;
}

int32_t CharVocab::id(const std::string& token) const {
  auto it = ids.find(token);
  return it == ids.end() ? kVocabUnk : it->second;
}

std::vector<int32_t> CharVocab::encode(std::string_view text, int64_t length, bool cls) const {
  check(length > 0, "encode: length must be > 0, got ", length);
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(length));
  if (cls) out.push_back(kVocabCls);
  for (const std::string& t : split_tokens(text, level)) {
    if (static_cast<int64_t>(out.size()) >= length) break;
    out.push_back(id(t));
  }
  out.resize(static_cast<size_t>(length), kVocabPad);
  return out;
}

CharVocab build_vocab(const std::vector<std::string>& texts, const VocabOptions& o) {
  check(o.max_size >= 3, "vocabulary max_size must be >= 3 (the reserved ids), got ", o.max_size);
  std::unordered_map<std::string, int64_t> counts;
  for (const std::string& text : texts)
    for (std::string& t : split_tokens(text, o.level)) counts[std::move(t)] += 1;
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  CharVocab v = with_reserved(o.level);
  for (const auto& [token, count] : sorted) {
    if (v.size() >= o.max_size || count < o.min_count) break;
    if (v.ids.count(token)) continue;  // a text containing "<UNK>" literally
    v.ids[token] = static_cast<int32_t>(v.tokens.size());
    v.tokens.push_back(token);
  }
  return v;
}

void save_vocab(const CharVocab& v, const std::string& path) {
  std::string text = "#level=" + v.level + "\n";
  for (const std::string& t : v.tokens) text += t + "\n";
  io::write_file_atomic(path, text);
}

CharVocab load_vocab(const std::string& path) {
  std::vector<std::string> lines = split_lines(io::read_file(path), path);
  check(!lines.empty() && lines[0].rfind("#level=", 0) == 0, path, ": first line must be #level=char or #level=word");
  CharVocab v = with_reserved(lines[0].substr(7));
  check(v.level == "char" || v.level == "word", path, ": unknown level '", v.level, "'");
  check(lines.size() >= 4 && lines[1] == "<PAD>" && lines[2] == "<UNK>" && lines[3] == "<CLS>", path,
        ": lines 2-4 must be <PAD>, <UNK>, <CLS>");
  for (size_t i = 4; i < lines.size(); ++i) {
    check(!v.ids.count(lines[i]), path, ":", i + 1, ": token '", lines[i], "' appears twice");
    v.ids[lines[i]] = static_cast<int32_t>(v.tokens.size());
    v.tokens.push_back(lines[i]);
  }
  return v;
}

}  // namespace attn::data
