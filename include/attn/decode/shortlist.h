// A vocabulary shortlist (Marian's lexical shortlists): for each source piece the K target pieces
// that most often go with it in training data, plus the N most frequent target pieces. At
// translation each sentence's softmax is taken over its own list (a token outside it gets -inf),
// and in small batches the output layer computes only the lists' rows (decode/row_decoder.h).
// The defaults (200 and 500) cost 0.15 BLEU on the one-hour EN->DE model (docs/decoding.md).
//
// Association is Dice's coefficient over sentence pairs, dice(s, t) = 2 c(s, t) / (c(s) + c(t)),
// c counting the pairs that hold the piece(s) (each at most once per pair); ties: lower id first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct ShortlistOptions {
  int top_k = 200;     // target pieces kept per source piece
  int frequent = 500;  // the most frequent target pieces, always allowed
};

struct Shortlist {
  std::vector<std::vector<int32_t>> by_source;  // [src_vocab]: best first, at most top_k
  std::vector<int32_t> frequent;                // most frequent first (by token count)
};

// From sentence pairs of ids (sources[i] and targets[i], no bos/eos needed).
Shortlist build_shortlist(const std::vector<std::vector<int32_t>>& sources,
                          const std::vector<std::vector<int32_t>>& targets, int64_t src_vocab, int64_t tgt_vocab,
                          const ShortlistOptions& options);

// safetensors: "by_source" I32 [src_vocab, top_k] (-1 pads a short row), "frequent" I32 [N].
void save_shortlist(const Shortlist& s, const std::string& path);
// Checks the shapes against the model's vocabularies and every id (errors name the file).
Shortlist load_shortlist(const std::string& path, int64_t src_vocab, int64_t tgt_vocab);

// The target ids a batch may output, sorted: the frequent ones, every special id below 4
// (pad, bos, eos, unk), the shortlist of every source token, and `extra` (e.g. forced prefixes).
std::vector<int32_t> shortlist_vocabulary(const Shortlist& s, const std::vector<std::vector<int32_t>>& sources,
                                          const std::vector<std::vector<int32_t>>& extra, int64_t tgt_vocab);

}  // namespace attn
