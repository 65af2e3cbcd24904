// Continuous batching (Orca, Yu et al., OSDI 2022; vLLM): a beam or greedy search that sentences
// join while it runs. Every step decodes all live sentences together; a sentence added between
// steps joins at the next one (encoded then, with the others added since), and a sentence leaves
// at the step it finishes, its hypotheses handed back at once. A server keeps the batch full
// this way when requests come and go, instead of waiting for a whole batch to end.
//
// Each sentence's hypotheses equal search() on that sentence alone with the same options (the
// rules of search.h, each sentence counting its own steps).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "attn/decode/search.h"
#include "attn/models/transformer.h"

namespace attn {

struct StreamResult {
  uint64_t id = 0;                     // as given to add()
  std::vector<Hypothesis> hypotheses;  // up to n_best, best first
};

class SearchStream {
 public:
  // The model must outlive the stream. options: as search() takes them (no sampling; use_cache).
  SearchStream(const Transformer& m, const SearchOptions& options);
  ~SearchStream();
  SearchStream(SearchStream&&) noexcept;
  SearchStream& operator=(SearchStream&&) noexcept;

  // Queues a sentence (source ids as search() takes them, non-empty; prefix: forced target
  // tokens, no eos) to join at the next step. Checked here: a bad one is refused, not queued.
  void add(uint64_t id, const std::vector<int32_t>& source, const std::vector<int32_t>& prefix = {});
  // One step of every sentence (the queued ones join first). Returns those that finished.
  std::vector<StreamResult> step();
  // Takes sentences out of the search, queued or decoding (their requests were cancelled): their
  // rows leave the decoder now, the others keep theirs. Ids not in the search are ignored.
  void remove(const std::vector<uint64_t>& ids);
  // Sentences in the search, queued or decoding.
  size_t size() const;
  // Decoder rows the next step feeds (sentences x their live beams; the queued ones' first rows).
  size_t rows() const;
  const SearchOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Prepares the products of every batch a stream of up to max_rows decoder rows meets: one
// decoding step at each row count from 1 to max_rows (one-token sentences), so that oneDNN
// generates their code (per product shape, kernels/gemm_onednn.cpp) before a server's first
// requests instead of during them, and its memory is at its steady size from the start. Run it on
// the thread that will decode (its thread count is part of a product's shape).
void warm_up(const Transformer& m, int64_t max_rows);

}  // namespace attn
