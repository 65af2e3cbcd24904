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
  // Sentences in the search, queued or decoding.
  size_t size() const;
  // Decoder rows the next step feeds (sentences x their live beams; the queued ones' first rows).
  size_t rows() const;
  const SearchOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace attn
