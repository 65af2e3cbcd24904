// Fitting long sources to the model's positions (include/attn/decode/long_lines.h).
#include "attn/decode/long_lines.h"

#include "attn/error.h"

namespace attn {

namespace {

// ids cut into the fewest pieces of at most `max` ids, their lengths differing by at most one.
std::vector<std::vector<int32_t>> equal_pieces(const std::vector<int32_t>& ids, size_t max) {
  const size_t n = ids.size(), count = (n + max - 1) / max;
  std::vector<std::vector<int32_t>> out;
  for (size_t k = 0, at = 0; k < count; ++k) {
    const size_t len = n / count + (k < n % count ? 1 : 0);
    out.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(at), ids.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
  }
  return out;
}

void refuse(const std::string& where, size_t tokens, size_t max_ids) {
  fail(where, ": ", tokens, " tokens, more than the model's ", max_ids,
       " positions (--on-long error; split or truncate translate it)");
}

// The words of `text` grouped greedily into runs of at most `max` tokens each (by each word's own
// token count, which SentencePiece's split at spaces makes additive).
std::vector<std::string> word_groups(const data::Tokenizer& tokenizer, const std::string& text, size_t max) {
  std::vector<std::string> groups;
  std::string group;
  size_t group_tokens = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find(' ', start + 1);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);  // with the space before it
    const size_t tokens = tokenizer.encode(word).size();
    if (!group.empty() && group_tokens + tokens > max) {
      groups.push_back(group);
      group.clear(), group_tokens = 0;
    }
    group += word, group_tokens += tokens;
    start = end;
  }
  if (!group.empty()) groups.push_back(group);
  return groups;
}

}  // namespace

OnLong parse_on_long(const std::string& name, const std::string& flag) {
  if (name == "split") return OnLong::split;
  if (name == "truncate") return OnLong::truncate;
  if (name == "error") return OnLong::error;
  fail(flag, " '", name, "' is not known (split, truncate, error)");
}

FittedSource fit_ids(std::vector<int32_t> ids, size_t max_ids, OnLong policy, const std::string& where) {
  check(max_ids >= 1, where, ": the model has no positions");
  FittedSource f;
  f.tokens = ids.size();
  if (ids.empty()) return f;
  if (ids.size() <= max_ids) {
    f.pieces.push_back(std::move(ids));
  } else if (policy == OnLong::error) {
    refuse(where, ids.size(), max_ids);
  } else if (policy == OnLong::truncate) {
    ids.resize(max_ids);
    f.pieces.push_back(std::move(ids));
    f.truncated = true;
  } else {
    f.pieces = equal_pieces(ids, max_ids);
  }
  return f;
}

FittedSource fit_text(const data::Tokenizer& tokenizer, const std::string& text, int32_t eos, size_t max_ids,
                      OnLong policy, const std::string& where) {
  const size_t tail = eos >= 0 ? 1 : 0;  // no eos: a model whose sources have none (Argos')
  check(max_ids >= 1 + tail, where, ": the model's positions (", max_ids, ") leave no room for a token and eos");
  FittedSource f;
  std::vector<int32_t> ids = tokenizer.encode(text);
  f.tokens = ids.size() + tail;
  if (ids.empty()) return f;  // blank: no sentence
  if (f.tokens > max_ids && policy == OnLong::error) refuse(where, f.tokens, max_ids);
  if (f.tokens <= max_ids || policy == OnLong::truncate) {
    f.truncated = f.tokens > max_ids;
    if (f.truncated) ids.resize(max_ids - tail);
    if (tail) ids.push_back(eos);
    f.pieces.push_back(std::move(ids));
    return f;
  }
  for (const std::string& group : word_groups(tokenizer, text, max_ids - tail))
    for (std::vector<int32_t>& piece : equal_pieces(tokenizer.encode(group), max_ids - tail)) {
      if (tail) piece.push_back(eos);
      f.pieces.push_back(std::move(piece));
    }
  return f;
}

}  // namespace attn
