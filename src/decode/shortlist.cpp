#include "attn/decode/shortlist.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "attn/error.h"
#include "attn/io/safetensors.h"
#include "attn/tensor/tensor.h"

namespace attn {
namespace {

std::vector<int32_t> unique_ids(const std::vector<int32_t>& ids, int64_t vocab, const char* side, size_t line) {
  std::vector<int32_t> u(ids);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  for (int32_t id : u)
    check(id >= 0 && id < vocab, "shortlist: ", side, " line ", line + 1, ": id ", id, " not in [0, ", vocab, ")");
  return u;
}

// The k best of a row by Dice (ties: lower id), given c(s), c(t) and c(s, t).
std::vector<int32_t> best_by_dice(const std::unordered_map<int32_t, int64_t>& joint, int64_t cs,
                                  const std::vector<int64_t>& ct, int k) {
  std::vector<std::pair<double, int32_t>> scored;
  for (const auto& [t, n] : joint)
    scored.push_back({2.0 * static_cast<double>(n) / static_cast<double>(cs + ct[static_cast<size_t>(t)]), t});
  auto better = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  const size_t keep = std::min(scored.size(), static_cast<size_t>(k));
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(), better);
  std::vector<int32_t> out;
  for (size_t i = 0; i < keep; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace

Shortlist build_shortlist(const std::vector<std::vector<int32_t>>& sources,
                          const std::vector<std::vector<int32_t>>& targets, int64_t src_vocab, int64_t tgt_vocab,
                          const ShortlistOptions& o) {
  check(sources.size() == targets.size(), "shortlist: ", sources.size(), " source lines but ", targets.size(),
        " target lines");
  check(o.top_k >= 1 && o.frequent >= 0, "shortlist: top_k must be >= 1 and frequent >= 0");
  std::vector<int64_t> cs(static_cast<size_t>(src_vocab), 0), ct(static_cast<size_t>(tgt_vocab), 0);
  std::vector<int64_t> tokens(static_cast<size_t>(tgt_vocab), 0);
  std::vector<std::unordered_map<int32_t, int64_t>> joint(static_cast<size_t>(src_vocab));
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::vector<int32_t> s = unique_ids(sources[i], src_vocab, "source", i);
    const std::vector<int32_t> t = unique_ids(targets[i], tgt_vocab, "target", i);
    for (int32_t id : targets[i]) ++tokens[static_cast<size_t>(id)];
    for (int32_t b : t) ++ct[static_cast<size_t>(b)];
    for (int32_t a : s) {
      ++cs[static_cast<size_t>(a)];
      for (int32_t b : t) ++joint[static_cast<size_t>(a)][b];
    }
  }
  Shortlist out;
  for (size_t a = 0; a < joint.size(); ++a) out.by_source.push_back(best_by_dice(joint[a], cs[a], ct, o.top_k));
  std::vector<int32_t> order(static_cast<size_t>(tgt_vocab));
  for (size_t t = 0; t < order.size(); ++t) order[t] = static_cast<int32_t>(t);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return tokens[static_cast<size_t>(a)] > tokens[static_cast<size_t>(b)]; });
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < o.frequent; ++i)
    if (tokens[static_cast<size_t>(order[i])] > 0) out.frequent.push_back(order[i]);
  return out;
}

void save_shortlist(const Shortlist& s, const std::string& path) {
  size_t k = 1;
  for (const auto& row : s.by_source) k = std::max(k, row.size());
  std::vector<int32_t> table(s.by_source.size() * k, -1);
  for (size_t a = 0; a < s.by_source.size(); ++a)
    std::copy(s.by_source[a].begin(), s.by_source[a].end(), table.begin() + static_cast<std::ptrdiff_t>(a * k));
  const std::vector<int32_t> frequent = s.frequent.empty() ? std::vector<int32_t>{-1} : s.frequent;
  const int64_t rows = static_cast<int64_t>(s.by_source.size()), n = static_cast<int64_t>(frequent.size());
  io::save_safetensors(path,
                       {{"by_source", Tensor::from_ids(table, {rows, static_cast<int64_t>(k)})},  // [src_vocab, K]
                        {"frequent", Tensor::from_ids(frequent, {n})}},                           // [N]
                       {{"format", "attn shortlist"}});
}

Shortlist load_shortlist(const std::string& path, int64_t src_vocab, int64_t tgt_vocab) {
  auto tensors = io::load_safetensors(path);
  check(tensors.count("by_source") && tensors.count("frequent"), path, ": not a shortlist (no \"by_source\" and "
        "\"frequent\" tensors; make one with attn shortlist)");
  const Tensor table = tensors.at("by_source").contiguous(), frequent = tensors.at("frequent").contiguous();
  check(table.dtype() == DType::i32 && table.dim() == 2 && table.size(0) == src_vocab, path, ": by_source must be I32 [",
        src_vocab, " (the model's source vocabulary), K]");
  check(frequent.dtype() == DType::i32 && frequent.dim() == 1, path, ": frequent must be I32 [N]");
  auto valid = [&](int32_t id, const char* what) {
    check(id >= -1 && id < tgt_vocab, path, ": ", what, " holds id ", id, ", not in the model's target vocabulary of ",
          tgt_vocab);
    return id >= 0;
  };
  Shortlist s;
  const int64_t k = table.size(1);
  for (int64_t a = 0; a < src_vocab; ++a) {
    s.by_source.emplace_back();
    for (int64_t j = 0; j < k; ++j)
      if (valid(table.data<int32_t>()[a * k + j], "by_source")) s.by_source.back().push_back(table.data<int32_t>()[a * k + j]);
  }
  for (int64_t j = 0; j < frequent.size(0); ++j)
    if (valid(frequent.data<int32_t>()[j], "frequent")) s.frequent.push_back(frequent.data<int32_t>()[j]);
  return s;
}

std::vector<int32_t> shortlist_vocabulary(const Shortlist& s, const std::vector<std::vector<int32_t>>& sources,
                                          const std::vector<std::vector<int32_t>>& extra, int64_t tgt_vocab) {
  std::set<int32_t> ids(s.frequent.begin(), s.frequent.end());
  for (int32_t special = 0; special < 4 && special < tgt_vocab; ++special) ids.insert(special);
  for (const auto& source : sources)
    for (int32_t a : source)
      if (a >= 0 && static_cast<size_t>(a) < s.by_source.size())
        ids.insert(s.by_source[static_cast<size_t>(a)].begin(), s.by_source[static_cast<size_t>(a)].end());
  for (const auto& e : extra) ids.insert(e.begin(), e.end());
  return {ids.begin(), ids.end()};
}

}  // namespace attn
