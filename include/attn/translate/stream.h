// Continuous batching of translation requests (decode/stream.h's SearchStream, one level up): a
// request is a group of source lines as the Translator reads them (translate/translator.h); each
// piece of each line joins the running search as a sentence of its own, and the request comes
// back, its lines' pieces joined, at the step its last piece finishes. attn serve keeps its
// batches full this way while requests come and go. A request's hypotheses equal
// Translator::search on its lines alone (decode/stream.h's rule, each sentence on its own).
// At most max_decoding sentences decode at once: the others wait in arrival order and join as
// sentences finish, so a request larger than a batch flows through it at the batch's size. A
// request taken out (remove: its client stopped waiting) leaves at once, its rows with it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "attn/decode/search.h"
#include "attn/decode/stream.h"
#include "attn/translate/options.h"
#include "attn/translate/translator.h"

namespace attn {

struct FinishedRequest {
  uint64_t id = 0;                                 // as add() returned it
  std::vector<std::vector<Hypothesis>> hypotheses;  // per line, best first (none for a blank line)
};

class TranslationStream {
 public:
  // Whether requests with these options can stream on this translator: one Transformer (not an
  // ensemble or an RNN), search without sampling or a shortlist, with the KV cache.
  static bool streams(const Translator& t, const TranslateOptions& o);

  // The translator must outlive the stream; every request of the stream has options `o`.
  // max_decoding: sentences decoding at once (0: all).
  TranslationStream(const Translator& t, const TranslateOptions& o, size_t max_decoding = 0);

  // Queues the lines of a request to join at the next step; returns its id. A request of blank
  // lines only is finished at once: the next step() returns it.
  uint64_t add(std::vector<SourceLine> lines);
  // One step of every sentence; the requests whose last piece finished, in the order they ended.
  // `sentences` / `tokens` get the pieces that finished in it and their source tokens.
  std::vector<FinishedRequest> step(size_t* sentences = nullptr, size_t* tokens = nullptr);
  // Takes request `id` out, decoding or waiting, unfinished: it never comes back from step().
  // Returns its pieces that had not finished (0: no such request left).
  size_t remove(uint64_t id);

  size_t sentences() const { return sentences_; }  // pieces held, decoding or waiting (0: idle)
  size_t tokens() const { return tokens_; }        // their source tokens
  const TranslateOptions& options() const { return options_; }

 private:
  struct Request {
    uint64_t id = 0;
    std::vector<std::vector<std::vector<Hypothesis>>> parts;  // [line][piece]
    size_t left = 0;
  };
  struct Place {
    std::shared_ptr<Request> request;
    size_t line = 0, piece = 0, tokens = 0;
  };

  struct Waiting {
    uint64_t id = 0;
    std::vector<int32_t> source, prefix;
  };

  TranslateOptions options_;
  SearchStream search_;
  size_t max_decoding_ = 0;
  std::deque<Waiting> waiting_;      // pieces not in the search yet (past max_decoding), oldest first
  std::map<uint64_t, Place> where_;  // a piece's sentence id -> its request, line and piece
  std::vector<std::shared_ptr<Request>> done_;  // finished before a step (blank lines only)
  uint64_t next_sentence_ = 0, next_request_ = 0;
  size_t sentences_ = 0, tokens_ = 0;
};

}  // namespace attn
