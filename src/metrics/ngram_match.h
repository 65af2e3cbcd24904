// Internal to src/metrics: clipped n-gram matching, the step BLEU and chrF share. An n-gram is
// packed exactly into a 128-bit key (BLEU: up to 4 token ids of 32 bits; chrF: up to 6 code
// points of 21 bits), and counted in an open-addressing table that compares whole keys, so
// this is Python's Counter without any chance of a collision changing a count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace attn::metrics::detail {

using NgramKey = unsigned __int128;

// Key of the n-gram symbols[i .. i+n) with `bits` bits per symbol.
template <typename Symbol>
NgramKey ngram_key(const std::vector<Symbol>& symbols, size_t i, int n, int bits) {
  NgramKey key = 0;
  for (int k = 0; k < n; ++k) key = (key << bits) | static_cast<NgramKey>(symbols[i + k]);
  return key;
}

// Counts of n-grams of one order; reused across sentences (clear() costs the entries used).
class NgramTable {
 public:
  // Makes room for `n` distinct keys and empties the table.
  void reset(size_t n) {
    size_t want = 16;
    while (want < 2 * n) want *= 2;
    if (want > slots_.size()) {
      slots_.assign(want, Slot{});
      used_.clear();
    } else {
      clear();
    }
    mask_ = slots_.size() - 1;
  }
  void clear() {
    for (size_t i : used_) slots_[i] = Slot{};
    used_.clear();
  }
  // The count stored for key, created as 0 when absent. At most the reset() size of keys.
  int64_t& at(NgramKey key) {
    size_t i = slot_of(key);
    if (!slots_[i].live) {
      slots_[i].key = key;
      slots_[i].live = true;
      used_.push_back(i);
    }
    return slots_[i].count;
  }
  // The count stored for key, or nullptr when absent.
  int64_t* find(NgramKey key) {
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
    int64_t count = 0;
    bool live = false;
  };
  size_t slot_of(NgramKey key) const {
    uint64_t h = static_cast<uint64_t>(key) ^ (static_cast<uint64_t>(key >> 64) * 0x9E3779B97F4A7C15ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    size_t i = h & mask_;
    while (slots_[i].live && slots_[i].key != key) i = (i + 1) & mask_;
    return i;
  }
  std::vector<Slot> slots_;
  std::vector<size_t> used_;
  size_t mask_ = 0;
};

// How many n-grams of order n a sequence of `length` symbols has.
inline int64_t ngram_count(size_t length, int n) {
  return length >= static_cast<size_t>(n) ? static_cast<int64_t>(length - n + 1) : 0;
}

// table := counts of the n-grams of order n in symbols.
template <typename Symbol>
void count_ngrams(const std::vector<Symbol>& symbols, int n, int bits, NgramTable& table) {
  int64_t count = ngram_count(symbols.size(), n);
  table.reset(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) ++table.at(ngram_key(symbols, i, n, bits));
}

// Clipped matches: each hypothesis n-gram takes one unit of its count from `ref` while any is
// left, so the total is sum over n-grams g of min(count_hyp(g), count_ref(g)). Uses up `ref`.
template <typename Symbol>
int64_t take_matches(const std::vector<Symbol>& hyp, int n, int bits, NgramTable& ref) {
  int64_t matches = 0, count = ngram_count(hyp.size(), n);
  for (int64_t i = 0; i < count; ++i) {
    int64_t* left = ref.find(ngram_key(hyp, i, n, bits));
    if (left && *left > 0) --*left, ++matches;
  }
  return matches;
}

}  // namespace attn::metrics::detail
