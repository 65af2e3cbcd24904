// attn attend: the attention weights of a model on one sentence as a document (JSON) and its
// pictures: a self-contained HTML page (inline SVG and script) or a static SVG of heatmaps.
//
// The document (--format json) is what the page draws:
//   {"kind": "transformer" | "rnn" | "classifier", "model": DIR,
//    "source": {"text", "tokens"}, "target": {"text", "tokens", "outputs", "given"} (translation),
//    "prediction": {"label", "probability"} (classifier),
//    "stacks": [{"id", "title", "queries": "source" | "target", "keys": "source" | "target",
//                "layers": [{"layer": L, "heads": [{"head": H, "weights": [[...]], "summary": {...}}]}]}]}
// Layers and heads count from 1. weights[i][j]: query position i's weight on key position j.
// target.tokens are the decoder's inputs (bos first); outputs[i], what position i predicts.
// A head's summary: entropy (bits, mean over queries), the mean weight on the previous, the same
// and the next position (self-attention only) and on eos keys (null when there are none).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/decode/text.h"
#include "attn/decode/search.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/seq2seq.h"

namespace attn {

// What to draw: the sentence (text, or token ids with --ids), the target to teacher-force (empty:
// the model's own translation by `search`), and one layer / head (1-based; 0: all).
struct AttendRequest {
  std::string model;  // the name the document shows (attn attend: the directory)
  std::string src, tgt;
  bool ids = false;
  int layer = 0, head = 0;
  SearchOptions search;
};

// The document of a loaded translation model (tok empty: src and tgt are token ids) or classifier,
// prepared as the caller chose (attn attend: fp32; attn serve: the model's precision).
nlohmann::json translation_doc(const Seq2Seq& m, const Tokenizers& tok, const AttendRequest& r);
nlohmann::json classifier_doc(const ClassifierModel& m, const AttendRequest& r);

struct HeadSummary {
  double entropy = 0, previous = 0, same = 0, next = 0, eos = 0;
  bool positional = false;  // previous/same/next apply (queries and keys are one sequence)
  bool has_eos = false;
};
HeadSummary summarize_head(const std::vector<std::vector<float>>& weights, const std::vector<std::string>& keys,
                           bool self_attention, const std::string& eos_token);

std::string attend_html(const nlohmann::json& doc);
std::string attend_svg(const nlohmann::json& doc);

}  // namespace attn
