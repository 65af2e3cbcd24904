// Batches of sentence pairs by tokens (§5.1: "each training batch contained a set of sentence
// pairs containing approximately 25000 source tokens and 25000 target tokens"), with length
// bucketing and seeded shuffling.
//
// Layout of a batch of B pairs (x, y), padded with kPadId (0) on the right:
//   src     [B, S] = x + eos          (the encoder reads the source and its eos)
//   tgt_in  [B, T] = bos + y          (decoder input, teacher forcing)
//   tgt_out [B, T] = y + eos          (what the decoder must predict; pad = ignore)
// The budget is per side on the padded size: B * S <= max_tokens and B * T <= max_tokens.
//
// Epoch e is a pure function of (examples, options, e): shuffle the examples, sort by length
// (longer side, then target, then source) inside windows of bucket_window examples, cut each
// window into batches, shuffle the batches.
// So the position {epoch, batch_in_epoch} is the whole state: restore() resumes exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/data/parallel_corpus.h"
#include "attn/tensor/tensor.h"

namespace attn::data {

struct BatchOptions {
  int64_t max_tokens = 4096;   // per side: padded B*S and B*T each <= max_tokens
  int64_t max_sentences = 0;   // 0 = no cap
  uint64_t seed = 1;
  int64_t bucket_window = 0;   // examples sorted by length together; 0 = about 100 batches' worth
};

struct Batch {
  Tensor src;      // [B, S] i32
  Tensor tgt_in;   // [B, T] i32 (undefined when built without targets)
  Tensor tgt_out;  // [B, T] i32
  int64_t src_tokens = 0;  // non-pad source tokens, eos included
  int64_t tgt_tokens = 0;  // non-pad tgt_out tokens, eos included
  std::vector<int64_t> indices;  // row b is examples[indices[b]]
  int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

// The batch of examples[indices[0]], examples[indices[1]], ... in that order.
Batch make_batch(const std::vector<Example>& examples, const std::vector<int64_t>& indices,
                 bool with_target = true);

// Epoch `epoch`'s batches as lists of example indices (what Batcher yields, in order).
std::vector<std::vector<int64_t>> plan_epoch(const std::vector<Example>& examples,
                                             const BatchOptions& options, int64_t epoch);

struct BatcherState {
  int64_t epoch = 0;           // counted from 0
  int64_t batch_in_epoch = 0;  // the batch next() returns (after an epoch's last: {epoch+1, 0})
  uint64_t fingerprint = 0;    // of the examples and options; restore() refuses another's state
};

class Batcher {
 public:
  // Errors: no examples, or an example that cannot fit max_tokens alone (names its line).
  Batcher(std::vector<Example> examples, BatchOptions options);

  Batch next();  // the batches of epoch e, then those of epoch e + 1, ...
  BatcherState state() const { return {epoch_, next_, fingerprint_}; }
  void restore(const BatcherState& state);  // fingerprint 0 skips the check

  int64_t batches_in_epoch() const { return static_cast<int64_t>(plan_.size()); }  // state's epoch
  const std::vector<Example>& examples() const { return examples_; }
  const BatchOptions& options() const { return options_; }  // bucket_window resolved

 private:
  std::vector<Example> examples_;
  BatchOptions options_;
  uint64_t fingerprint_ = 0;
  int64_t epoch_ = 0, next_ = 0;
  std::vector<std::vector<int64_t>> plan_;  // the current epoch
};

// Every example once, in batches of similar length (longest first), for evaluation and
// translation; batch.indices give each row's place in the input to restore the order.
std::vector<Batch> batches_in_order(const std::vector<Example>& examples, int64_t max_tokens,
                                    int64_t max_sentences = 0);
// Source sentences only (tgt tensors undefined).
std::vector<Batch> batches_in_order(const std::vector<std::vector<int32_t>>& src,
                                    int64_t max_tokens, int64_t max_sentences = 0);

}  // namespace attn::data
