#include "attn/data/char_vocab.h"

#include <algorithm>
#include <filesystem>
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
    fail("token level must be char or word here (spm needs its model: CharVocab::split), got '", level, "'");
  }
  return out;
}

std::vector<std::string> CharVocab::split(std::string_view text) const {
  if (level != "spm") return split_tokens(text, level);
  check(spm != nullptr, "vocabulary of level spm has no SentencePiece model");
  return spm->encode_pieces(text);
}

std::shared_ptr<const Tokenizer> train_piece_model(const std::vector<std::string>& texts,
                                                   const std::string& model_prefix, int vocab_size) {
  std::string lines;
  for (const std::string& t : texts) {
    check(t.find('\n') == std::string::npos, "spm training: a text holds a line break");
    lines += t + "\n";
  }
  std::string input = model_prefix + ".train.txt";
  io::write_file_atomic(input, lines);
  TokenizerTrainOptions o;
  o.inputs = {input};
  o.model_prefix = model_prefix;
  o.vocab_size = vocab_size;
  o.model_type = "unigram";
  o.threads = 1;  // unigram models differ slightly with the thread count
  try {
    Tokenizer::train(o);
  } catch (...) {
    std::filesystem::remove(input);
    throw;
  }
  std::filesystem::remove(input);
  return std::make_shared<const Tokenizer>(Tokenizer::load(model_prefix + ".model"));
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
  for (const std::string& t : split(text)) {
    if (static_cast<int64_t>(out.size()) >= length) break;
    out.push_back(id(t));
  }
  out.resize(static_cast<size_t>(length), kVocabPad);
  return out;
}

CharVocab build_vocab(const std::vector<std::string>& texts, const VocabOptions& o,
                      std::shared_ptr<const Tokenizer> spm) {
  check(o.max_size >= 3, "vocabulary max_size must be >= 3 (the reserved ids), got ", o.max_size);
  check(o.level == "char" || o.level == "word" || o.level == "spm", "token level must be char, word or spm, got '",
        o.level, "'");
  check(o.level != "spm" || spm != nullptr, "build_vocab: level spm needs a SentencePiece model");
  CharVocab v = with_reserved(o.level);
  v.spm = std::move(spm);
  std::unordered_map<std::string, int64_t> counts;
  for (const std::string& text : texts)
    for (std::string& t : v.split(text)) counts[std::move(t)] += 1;
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (const auto& [token, count] : sorted) {
    if (v.size() >= o.max_size || count < o.min_count) break;
    if (v.ids.count(token)) continue;  // a text containing "<UNK>" literally
    v.ids[token] = static_cast<int32_t>(v.tokens.size());
    v.tokens.push_back(token);
  }
  return v;
}

namespace {
std::string spm_path(const std::string& vocab_path) {
  return (std::filesystem::path(vocab_path).parent_path() / "spm.model").string();
}
}  // namespace

void save_vocab(const CharVocab& v, const std::string& path) {
  std::string text = "#level=" + v.level + "\n";
  for (const std::string& t : v.tokens) text += t + "\n";
  if (v.level == "spm") {
    check(v.spm != nullptr, "save_vocab ", path, ": level spm without its SentencePiece model");
    std::string model = spm_path(path);
    if (!std::filesystem::exists(model) || io::read_file(model) != v.spm->serialized())
      io::write_file_atomic(model, v.spm->serialized());
  }
  io::write_file_atomic(path, text);
}

CharVocab load_vocab(const std::string& path) {
  std::vector<std::string> lines = split_lines(io::read_file(path), path);
  check(!lines.empty() && lines[0].rfind("#level=", 0) == 0, path,
        ": first line must be #level=char, #level=word or #level=spm");
  CharVocab v = with_reserved(lines[0].substr(7));
  check(v.level == "char" || v.level == "word" || v.level == "spm", path, ": unknown level '", v.level, "'");
  if (v.level == "spm") v.spm = std::make_shared<const Tokenizer>(Tokenizer::load(spm_path(path)));
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
