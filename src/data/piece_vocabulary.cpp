#include "attn/data/piece_vocabulary.h"

#include <nlohmann/json.hpp>

#include "attn/data/text_file.h"
#include "attn/error.h"
#include "attn/io/io.h"

namespace attn::data {
namespace {

void add(PieceVocabulary& v, std::string piece, size_t id) {
  check(v.ids.emplace(piece, static_cast<int32_t>(id)).second, v.source, ": the piece \"", piece,
        "\" is in the vocabulary twice (a token id is one piece)");
  v.pieces[id] = std::move(piece);
}

}  // namespace

int32_t PieceVocabulary::find(const std::string& piece) const {
  auto it = ids.find(piece);
  return it == ids.end() ? -1 : it->second;
}

PieceVocabulary piece_vocabulary_from_json(std::string_view text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(source, ": not JSON (", e.what(), ")");
  }
  PieceVocabulary v;
  v.source = source;
  if (j.is_array()) {  // CTranslate2: the pieces in id order
    v.pieces.resize(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      check(j[i].is_string(), source, ": entry ", i, " is ", j[i].dump(0).substr(0, 80), ", not a piece (a string)");
      add(v, j[i].get<std::string>(), i);
    }
    return v;
  }
  check(j.is_object(), source, ": a vocabulary is {\"piece\": id, ...} or a list of pieces, got ",
        j.dump().substr(0, 80));
  v.pieces.resize(j.size());
  std::vector<bool> seen(j.size(), false);
  for (const auto& [piece, id] : j.items()) {
    check(id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < static_cast<int64_t>(j.size()),
          source, ": \"", piece, "\" has id ", id.dump(0).substr(0, 80), ", not one of 0 .. ", j.size() - 1,
          " (the ids of a vocabulary of ", j.size(), " pieces)");
    const size_t i = id.get<size_t>();
    check(!seen[i], source, ": id ", i, " is given to two pieces (\"", v.pieces[i], "\" and \"", piece, "\")");
    seen[i] = true;
    v.pieces[i] = piece;
    v.ids[piece] = static_cast<int32_t>(i);
  }
  return v;
}

PieceVocabulary read_piece_vocabulary(const std::string& path) {
  const std::string text = io::read_file(path);
  if (path.size() < 4 || path.substr(path.size() - 4) != ".txt") return piece_vocabulary_from_json(text, path);
  PieceVocabulary v;  // vocabulary.txt: a piece a line
  v.source = path;
  std::vector<std::string> lines = read_lines(path);
  v.pieces.resize(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    check(!lines[i].empty(), path, ":", i + 1, ": an empty line is not a piece");
    add(v, std::move(lines[i]), i);
  }
  return v;
}

std::string clean_up_tokenization(std::string text) {
  static const std::pair<const char*, const char*> rules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  // Each rule over the whole text in turn, left to right, as Python's chained str.replace.
  for (const auto& [from, to] : rules) {
    const std::string f = from, t = to;
    std::string out;
    size_t at = 0;
    for (size_t hit; (hit = text.find(f, at)) != std::string::npos; at = hit + f.size()) out.append(text, at, hit - at) += t;
    out.append(text, at, std::string::npos);
    text = std::move(out);
  }
  return text;
}

std::vector<std::pair<std::string, int32_t>> split_on_specials(const std::string& text, const PieceVocabulary& v,
                                                               const VocabularyRules& rules) {
  std::vector<std::pair<std::string, int32_t>> parts;
  std::string plain;
  for (size_t i = 0; i < text.size();) {
    size_t longest = 0;
    int32_t id = -1;
    for (const std::string& s : rules.specials) {
      const int32_t sid = v.find(s);
      if (sid >= 0 && s.size() > longest && text.compare(i, s.size(), s) == 0) longest = s.size(), id = sid;
    }
    if (id < 0) {
      plain += text[i++];
      continue;
    }
    if (!plain.empty()) parts.emplace_back(std::move(plain), -1);
    plain.clear();
    parts.emplace_back("", id);
    i += longest;
  }
  if (!plain.empty()) parts.emplace_back(std::move(plain), -1);
  return parts;
}

std::pair<std::string, std::string> remove_language_code(const std::string& text) {
  // ">>.+<<" as Python's re: at each position, ">>", at least one character that is not a
  // newline, then the last "<<" reachable without crossing a newline (greedy .+).
  auto match_at = [&](size_t p) -> size_t {  // the match's end, or 0
    if (text.compare(p, 2, ">>") != 0) return 0;
    size_t line_end = text.find('\n', p + 2);
    if (line_end == std::string::npos) line_end = text.size();
    const size_t last = line_end >= 2 ? text.rfind("<<", line_end - 2) : std::string::npos;
    return last != std::string::npos && last >= p + 3 ? last + 2 : 0;
  };
  std::string code, rest;
  if (const size_t end = match_at(0)) code = text.substr(0, end);
  for (size_t p = 0; p < text.size();) {
    if (const size_t end = match_at(p)) {
      p = end;
    } else {
      rest += text[p++];
    }
  }
  return {code, rest};
}

}  // namespace attn::data
