#include "attn/decode/batch.h"

#include <algorithm>
#include <numeric>

#include "attn/error.h"

namespace attn {

Tensor pad_ids(const std::vector<std::vector<int32_t>>& rows, int32_t pad_id) {
  check(!rows.empty(), "pad_ids: no rows");
  size_t longest = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    check(!rows[i].empty(), "pad_ids: row ", i, " is empty");
    longest = std::max(longest, rows[i].size());
  }
  int64_t B = static_cast<int64_t>(rows.size()), T = static_cast<int64_t>(longest);
  Tensor out = Tensor::empty({B, T}, DType::i32);  // [batch, longest]
  int32_t* p = out.data<int32_t>();
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy(rows[i].begin(), rows[i].end(), p + i * longest);
    std::fill(p + i * longest + rows[i].size(), p + (i + 1) * longest, pad_id);
  }
  return out;
}

std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<size_t>& lengths, size_t batch) {
  check(batch >= 1, "length_sorted_batches: batch size must be at least 1, got ", batch);
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
  std::vector<std::vector<size_t>> batches;
  for (size_t i = 0; i < order.size(); i += batch)
    batches.emplace_back(order.begin() + i, order.begin() + std::min(order.size(), i + batch));
  return batches;
}

std::vector<std::vector<size_t>> token_sorted_batches(const std::vector<size_t>& lengths, size_t max_tokens) {
  check(max_tokens >= 1, "token_sorted_batches: max_tokens must be at least 1, got ", max_tokens);
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
  std::vector<std::vector<size_t>> batches;
  size_t tokens = 0;
  for (size_t i : order) {
    if (batches.empty() || (!batches.back().empty() && tokens + lengths[i] > max_tokens)) {
      batches.emplace_back();
      tokens = 0;
    }
    batches.back().push_back(i);
    tokens += lengths[i];
  }
  return batches;
}

}  // namespace attn
