// Batches of token-id sequences: padding them into one [batch, len] tensor, and grouping
// sentences of similar length so that little of a batch is padding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/tensor/tensor.h"

namespace attn {

// rows of ids -> [rows, longest] I32, each row followed by pad_id up to the longest.
// Every row must be non-empty.
Tensor pad_ids(const std::vector<std::vector<int32_t>>& rows, int32_t pad_id);

// Indices 0..lengths.size()-1 ordered by length (stable: equal lengths keep their order) and cut
// into groups of at most `batch`.
std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<size_t>& lengths, size_t batch);

// The same order cut by tokens (CTranslate2's batch_type="tokens"): each group takes sentences
// while their lengths sum to at most max_tokens; a sentence longer than that is a group alone.
std::vector<std::vector<size_t>> token_sorted_batches(const std::vector<size_t>& lengths, size_t max_tokens);

}  // namespace attn
