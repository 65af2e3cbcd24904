// Internal to src/metrics: clipped n-gram matching, the step BLEU and chrF share. An n-gram is
// packed exactly into a 128-bit key (BLEU: up to 4 token ids of 32 bits; chrF: up to 6 code
// points of 21 bits), and counted in an open-addressing table that compares whole keys, so
// this is Python's Counter without any chance of a collision changing a count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/error.h"
#include "attn/parallel.h"

namespace attn::metrics::detail {

using NgramKey = unsigned __int128;

// Keys of order n from the keys of order n-1, in place (order 1: the symbols themselves):
// keys[i] = key of symbols[i .. i+n), `bits` bits per symbol, the first symbol highest.
template <typename Symbol>
void extend_keys(std::vector<NgramKey>& keys, const std::vector<Symbol>& symbols, int n, int bits) {
  if (n == 1) {
    keys.assign(symbols.begin(), symbols.end());
    return;
  }
  if (symbols.size() < static_cast<size_t>(n)) {
    keys.clear();
    return;
  }
  size_t count = symbols.size() - n + 1;
  for (size_t i = 0; i < count; ++i)
    keys[i] = (keys[i] << bits) | static_cast<NgramKey>(symbols[i + n - 1]);
  keys.resize(count);
}

// Counts of n-grams of one order; reused across sentences (clear() costs the entries used).
class NgramTable {
 public:
  // Empties the table and makes room for about `n` distinct keys (more still fit: it grows).
  void reset(size_t n) {
    clear();
    if (2 * n > slots_.size()) rebuild(2 * n);
  }
  void clear() {
    for (size_t i : used_) slots_[i] = Slot{};
    used_.clear();
  }
  // The count stored for key, created as 0 when absent.
  int32_t& at(NgramKey key) {
    if (2 * (used_.size() + 1) > slots_.size()) rebuild(2 * (used_.size() + 1));
    size_t i = slot_of(key);
    if (!slots_[i].live) {
      slots_[i].key = key;
      slots_[i].live = 1;
      used_.push_back(i);
    }
    return slots_[i].count;
  }
  // The count stored for key, or nullptr when absent.
  int32_t* find(NgramKey key) {
    if (slots_.empty()) return nullptr;
    size_t i = slot_of(key);
    return slots_[i].live ? &slots_[i].count : nullptr;
  }
  // Entries as (key, count), for merging tables.
  template <typename F>
  void for_each(F f) const {
    for (size_t i : used_) f(slots_[i].key, slots_[i].count);
  }

 private:
  struct Slot {
    NgramKey key = 0;
    int32_t count = 0;
    int32_t live = 0;
  };
  size_t slot_of(NgramKey key) const {
    uint64_t h = static_cast<uint64_t>(key) ^
                 (static_cast<uint64_t>(key >> 64) * 0x9E3779B97F4A7C15ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    size_t i = h & mask_;
    while (slots_[i].live && slots_[i].key != key) i = (i + 1) & mask_;
    return i;
  }
  // At least `want` slots (a power of two), keeping the entries.
  void rebuild(size_t want) {
    size_t size = 16;
    while (size < want) size *= 2;
    std::vector<Slot> old;
    old.reserve(used_.size());
    for (size_t i : used_) old.push_back(slots_[i]);
    slots_.assign(size, Slot{});
    mask_ = size - 1;
    used_.clear();
    for (const Slot& e : old) at(e.key) = e.count;
  }
  std::vector<Slot> slots_;
  std::vector<size_t> used_;
  size_t mask_ = 0;
};

// table := counts of the n-gram keys.
inline void count_keys(const std::vector<NgramKey>& keys, NgramTable& table) {
  table.reset(keys.size());
  for (NgramKey key : keys) ++table.at(key);
}

// Clipped matches: each hypothesis n-gram takes one unit of its count from `ref` while any is
// left, so the total is sum over n-grams g of min(count_hyp(g), count_ref(g)). Uses up `ref`.
inline int64_t take_matches(const std::vector<NgramKey>& hyp_keys, NgramTable& ref) {
  int64_t matches = 0;
  for (NgramKey key : hyp_keys) {
    int32_t* left = ref.find(key);
    if (left && *left > 0) --*left, ++matches;
  }
  return matches;
}

// The corpus statistics of a metric: `sentence(hyp, refs, scratch)` summed over every line, with
// each line's references taken from every stream. Sentences run in parallel; the statistics are
// integers, so the sum is the same in any order. `who` names the metric in messages.
template <typename Stats, typename Scratch, typename Sentence>
Stats corpus_stats(const char* who, const std::vector<std::string>& hyps,
                   const std::vector<std::vector<std::string>>& ref_streams, Sentence sentence) {
  check(!ref_streams.empty(), who, ": no reference stream given");
  for (size_t k = 0; k < ref_streams.size(); ++k)
    check(ref_streams[k].size() == hyps.size(), who, ": reference stream ", k + 1, " has ",
          ref_streams[k].size(), " lines but there are ", hyps.size(), " hypotheses");
  Stats sum;
  const int64_t n_lines = static_cast<int64_t>(hyps.size());
  RegionErrors errors;
#pragma omp parallel
  errors.guard([&] {
    Stats part;
    Scratch scratch;
    std::vector<std::string_view> refs(ref_streams.size());
#pragma omp for schedule(dynamic, 256) nowait
    for (int64_t i = 0; i < n_lines; ++i) {
      for (size_t k = 0; k < ref_streams.size(); ++k) refs[k] = ref_streams[k][i];
      part += sentence(hyps[i], refs, scratch);
    }
#pragma omp critical
    sum += part;
  });
  errors.rethrow();
  return sum;
}

}  // namespace attn::metrics::detail
