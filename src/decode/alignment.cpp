#include "attn/decode/alignment.h"

#include <cstdio>

#include "attn/error.h"

namespace attn {

int default_alignment_layer(int layers) { return layers >= 2 ? layers - 1 : 1; }

Matrix alignment_matrix(const AttentionMaps& maps, int layer, int64_t src_tokens, int64_t tgt_tokens) {
  const int layers = static_cast<int>(maps.cross.size());
  check(layer >= 1 && layer <= layers, "alignment layer ", layer, " is not between 1 and the model's ", layers,
        " encoder-decoder attention layers");
  const Tensor& map = maps.cross[static_cast<size_t>(layer - 1)];
  check(tgt_tokens <= map.size(2) && src_tokens <= map.size(3), "alignment: ", tgt_tokens, " x ", src_tokens,
        " tokens from a map ", shape_str(map.shape()));
  Matrix all = mean_over_heads(map, 0), out(static_cast<size_t>(tgt_tokens));
  for (int64_t j = 0; j < tgt_tokens; ++j)
    out[static_cast<size_t>(j)].assign(all[static_cast<size_t>(j)].begin(), all[static_cast<size_t>(j)].begin() + src_tokens);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> hard_alignment(const Matrix& a) {
  std::vector<std::pair<int64_t, int64_t>> links;
  for (size_t j = 0; j < a.size(); ++j) {
    if (a[j].empty()) continue;
    size_t best = 0;
    for (size_t i = 1; i < a[j].size(); ++i)
      if (a[j][i] > a[j][best]) best = i;
    links.emplace_back(static_cast<int64_t>(best), static_cast<int64_t>(j));
  }
  return links;
}

std::vector<int64_t> words_of_pieces(const std::vector<std::string>& pieces) {
  static const std::string kWordStart = "\xE2\x96\x81";  // U+2581
  std::vector<int64_t> word;
  int64_t w = -1;
  for (const std::string& p : pieces) {
    if (w < 0 || p.compare(0, kWordStart.size(), kWordStart) == 0) ++w;
    word.push_back(w);
  }
  return word;
}

Matrix word_matrix(const Matrix& a, const std::vector<int64_t>& src_word, const std::vector<int64_t>& tgt_word) {
  check(tgt_word.size() == a.size(), "word_matrix: ", tgt_word.size(), " target words for ", a.size(), " rows");
  const size_t S = src_word.empty() ? 0 : static_cast<size_t>(src_word.back() + 1);
  const size_t T = tgt_word.empty() ? 0 : static_cast<size_t>(tgt_word.back() + 1);
  Matrix out(T, std::vector<float>(S, 0.0f));
  std::vector<int64_t> tokens(T, 0);
  for (size_t j = 0; j < a.size(); ++j) {
    check(a[j].size() == src_word.size(), "word_matrix: row of ", a[j].size(), " for ", src_word.size(), " tokens");
    const size_t tw = static_cast<size_t>(tgt_word[j]);
    tokens[tw] += 1;
    for (size_t i = 0; i < a[j].size(); ++i) out[tw][static_cast<size_t>(src_word[i])] += a[j][i];
  }
  for (size_t t = 0; t < T; ++t)
    for (float& x : out[t]) x /= static_cast<float>(tokens[t] > 0 ? tokens[t] : 1);
  return out;
}

std::string format_hard(const std::vector<std::pair<int64_t, int64_t>>& links) {
  std::string out;
  for (const auto& [i, j] : links) out += (out.empty() ? "" : " ") + std::to_string(i) + "-" + std::to_string(j);
  return out;
}

std::string format_soft(const Matrix& a) {
  std::string out;
  char num[32];
  for (size_t j = 0; j < a.size(); ++j) {
    if (j) out += ' ';
    for (size_t i = 0; i < a[j].size(); ++i) {
      std::snprintf(num, sizeof num, "%s%.4g", i ? "," : "", static_cast<double>(a[j][i]));
      out += num;
    }
  }
  return out;
}

}  // namespace attn
