// Token ids as text: one sentence a line, ids separated by spaces (the --ids mode of translate
// and score, and torch_ref.py's id files).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// "5 6 7 2" -> {5, 6, 7, 2}. Every id must be an integer in [0, vocab); `where` ("file:line")
// names the line in the error otherwise. An empty (or all-space) line gives no ids.
std::vector<int32_t> parse_ids(const std::string& line, int64_t vocab, const std::string& where);

// Every id in [0, vocab), else the error parse_ids gives, naming `where`.
void check_ids(const std::vector<int32_t>& ids, int64_t vocab, const std::string& where);

// {5, 6, 7} -> "5 6 7"
std::string format_ids(const std::vector<int32_t>& ids);

}  // namespace attn
