// sacreBLEU's Tokenizer13a (tokenizers/tokenizer_13a.py + tokenizer_re.py), rule for rule.
// Each regex substitution is a left-to-right scan with non-overlapping matches, as re.sub does.
// The character classes are ASCII, so scanning UTF-8 bytes gives the same result as scanning
// code points: a multi-byte character is never a digit and never one of the matched symbols.
#include <string>
#include <string_view>
#include <vector>

#include "attn/metrics/bleu.h"
#include "unicode_text.h"

namespace attn::metrics {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// [\{-\~\[-\` -\&\(-\+\:-\@\/]: { | } ~  [ \ ] ^ _ `  space ! " # $ % &  ( ) * +  : ; < = > ? @  /
bool is_split_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0, hit;
  while ((hit = s.find(from, start)) != std::string::npos) {
    out.append(s, start, hit - start);
    out.append(to);
    start = hit + from.size();
  }
  if (start == 0) return;
  out.append(s, start, std::string::npos);
  s.swap(out);
}

// ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 '
std::string pad_symbols(std::string_view s) {
  std::string out;
  out.reserve(s.size() * 2);
  for (char c : s) {
    if (is_split_symbol(c)) {
      out += ' ';
      out += c;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// One two-character rule "(A)(B)" -> with the replacement given as a function of both.
template <typename First, typename Second, typename Emit>
std::string substitute_pairs(std::string_view s, First first, Second second, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 2);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace

std::string tokenize_13a(std::string_view raw) {
  // Language-independent part (Tokenizer13a.__call__).
  std::string line(raw);
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }
  // TokenizerRegexp on f' {line} '.
  std::string s = pad_symbols(" " + line + " ");
  auto not_digit = [](char c) { return !is_digit(c); };
  // ([^0-9])([\.,]) -> '\1 \2 ': period and comma unless preceded by a digit
  s = substitute_pairs(s, not_digit, is_period_or_comma, [](std::string& o, char a, char b) {
    o += a, o += ' ', o += b, o += ' ';
  });
  // ([\.,])([^0-9]) -> ' \1 \2': period and comma unless followed by a digit
  s = substitute_pairs(s, is_period_or_comma, not_digit, [](std::string& o, char a, char b) {
    o += ' ', o += a, o += ' ', o += b;
  });
  // ([0-9])(-) -> '\1 \2 ': dash after a digit
  s = substitute_pairs(s, is_digit, [](char c) { return c == '-'; },
                       [](std::string& o, char a, char b) { o += a, o += ' ', o += b, o += ' '; });
  // ' '.join(line.split())
  std::vector<std::string_view> words;
  detail::split_whitespace(s, words);
  std::string out;
  out.reserve(s.size());
  for (size_t k = 0; k < words.size(); ++k) {
    if (k) out += ' ';
    out.append(words[k]);
  }
  return out;
}

}  // namespace attn::metrics
