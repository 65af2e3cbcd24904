// The attend documents (attend/attend.h): every attention weight of a model on one sentence
// (models/attention_maps.h), as JSON that page.cpp and svg.cpp draw.
#include "attn/attend/attend.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "attn/data/tokenizer.h"
#include "attn/decode/id_lines.h"
#include "attn/decode/search.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/model_dir.h"
#include "attn/models/teacher_forced_attention.h"

namespace attn {

HeadSummary summarize_head(const std::vector<std::vector<float>>& weights, const std::vector<std::string>& keys,
                           bool self_attention, const std::string& eos_token) {
  HeadSummary s;
  s.positional = self_attention;
  for (const std::string& k : keys) s.has_eos = s.has_eos || k == eos_token;
  if (weights.empty()) return s;
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::vector<float>& row = weights[i];
    for (size_t j = 0; j < row.size(); ++j) {
      const double p = row[j];
      if (p > 0) s.entropy -= p * std::log2(p);
      if (j < keys.size() && keys[j] == eos_token) s.eos += p;
      if (j + 1 == i) s.previous += p;
      if (j == i) s.same += p;
      if (j == i + 1) s.next += p;
    }
  }
  const double n = static_cast<double>(weights.size());
  for (double* x : {&s.entropy, &s.eos, &s.previous, &s.same, &s.next}) *x /= n;
  return s;
}

namespace {

constexpr const char* kEos = "</s>";

nlohmann::json summary_json(const HeadSummary& s) {
  nlohmann::json j = {{"entropy", s.entropy}};
  j["previous"] = s.positional ? nlohmann::json(s.previous) : nlohmann::json();
  j["same"] = s.positional ? nlohmann::json(s.same) : nlohmann::json();
  j["next"] = s.positional ? nlohmann::json(s.next) : nlohmann::json();
  j["eos"] = s.has_eos ? nlohmann::json(s.eos) : nlohmann::json();
  return j;
}

// One stack's layers (1-based `layer` / `head` keep only that one; 0 keeps all), each map
// [1, heads, queries, keys] cut to `queries` x keys.size() positions.
nlohmann::json stack_json(const std::string& id, const std::string& title, const std::vector<Tensor>& maps,
                          const std::vector<std::string>& queries, const std::vector<std::string>& keys,
                          const std::pair<std::string, std::string>& sides, const AttendRequest& f) {
  nlohmann::json stack = {{"id", id}, {"title", title}, {"queries", sides.first}, {"keys", sides.second}};
  stack["layers"] = nlohmann::json::array();
  const int layers = static_cast<int>(maps.size());
  check(f.layer <= layers, "--layer ", f.layer, ": the ", title, " has ", layers, " layers");
  for (int l = 1; l <= layers; ++l) {
    if (f.layer && l != f.layer) continue;
    const Tensor& map = maps[static_cast<size_t>(l - 1)];
    const int heads = static_cast<int>(map.size(1));
    check(f.head <= heads, "--head ", f.head, ": the ", title, " has ", heads, " heads");
    nlohmann::json layer = {{"layer", l}, {"heads", nlohmann::json::array()}};
    for (int h = 1; h <= heads; ++h) {
      if (f.head && h != f.head) continue;
      std::vector<std::vector<float>> w = head_matrix(map, 0, h - 1);
      w.resize(queries.size());
      for (auto& row : w) row.resize(keys.size());
      const HeadSummary s = summarize_head(w, keys, sides.first == sides.second, kEos);
      layer["heads"].push_back({{"head", h}, {"weights", w}, {"summary", summary_json(s)}});
    }
    stack["layers"].push_back(layer);
  }
  return stack;
}

std::vector<std::string> token_strings(const data::Tokenizer* tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(tok ? tok->piece(id) : std::to_string(id));
  return out;
}

}  // namespace

nlohmann::json translation_doc(const Seq2Seq& m, const Tokenizers& tokenizers, const AttendRequest& f) {
  const Seq2SeqCommon c = m.common();
  const data::Tokenizer* tok = tokenizers.source.get();
  const data::Tokenizer* target_tok = tokenizers.target.get();
  std::vector<int32_t> src = tok ? tok->encode(f.src) : parse_ids(f.src, c.src_vocab, "--src");
  if (tok && tokenizers.source_eos) src.push_back(c.eos_id);  // the model's source is x + eos, as in training
  check(!src.empty(), "--src is empty");
  std::vector<int32_t> tgt;
  if (!f.tgt.empty()) tgt = target_tok ? target_tok->encode(f.tgt) : parse_ids(f.tgt, c.tgt_vocab, "--tgt");
  else tgt = search(m, {src}, f.search).front().front().tokens;
  std::vector<int32_t> tgt_in = {c.bos_id}, outputs = tgt;
  tgt_in.insert(tgt_in.end(), tgt.begin(), tgt.end());
  // A searched translation that fills every position was cut there, eos never chosen: its last
  // token was output at the last position, and no position is left to read it (nor an eos to show).
  if (f.tgt.empty() && static_cast<int64_t>(tgt.size()) >= c.max_len) tgt_in.pop_back();
  else outputs.push_back(c.eos_id);
  check(static_cast<int64_t>(std::max(src.size(), tgt_in.size())) <= c.max_len, "the sentence is longer than the model's max_len ", c.max_len);
  const AttentionMaps maps = teacher_forced_attention(m, src, tgt_in);
  const std::vector<std::string> s = token_strings(tok, src), t = token_strings(target_tok, tgt_in);
  nlohmann::json doc = {{"kind", m.kind() == ModelKind::rnn ? "rnn" : "transformer"}, {"model", f.model}};
  doc["source"] = {{"text", f.src}, {"tokens", s}};
  doc["target"] = {{"text", target_tok ? target_tok->decode(tgt) : format_ids(tgt)}, {"tokens", t},
                   {"outputs", token_strings(target_tok, outputs)}, {"given", !f.tgt.empty()}};
  doc["stacks"] = nlohmann::json::array();
  if (!maps.encoder_self.empty())
    doc["stacks"].push_back(stack_json("encoder_self", "Encoder self-attention", maps.encoder_self, s, s, {"source", "source"}, f));
  if (!maps.decoder_self.empty())
    doc["stacks"].push_back(stack_json("decoder_self", "Decoder self-attention (masked)", maps.decoder_self, t, t, {"target", "target"}, f));
  doc["stacks"].push_back(stack_json("cross", m.kind() == ModelKind::rnn ? "Attention over the source (alpha_t)" : "Encoder-decoder attention",
                                     maps.cross, t, s, {"target", "source"}, f));
  return doc;
}

nlohmann::json classifier_doc(const ClassifierModel& m, const AttendRequest& f) {
  check(f.tgt.empty(), "--tgt applies to translation models, not to a classifier");
  check(m.model.config.head_split == HeadSplit::standard, f.model, ": head_split '", name(m.model.config.head_split),
        "' attends over rows of a reshaped memory, not over positions: nothing to draw per token");
  const ClassifierConfig& c = m.model.config;
  std::vector<std::string> tokens = m.vocab.split(f.src);
  if (c.pooling == Pooling::cls) tokens.insert(tokens.begin(), "<CLS>");
  if (static_cast<int64_t>(tokens.size()) > c.pad_size) tokens.resize(static_cast<size_t>(c.pad_size));
  check(!tokens.empty(), "--src has no tokens");
  AttentionMaps maps;
  Tensor p;
  {
    NoGrad no_grad;
    p = softmax(classifier_logits(m.model, encode_texts(m, {f.src}), Context{}, &maps)).value();
  }
  int64_t best = 0;
  for (int64_t k = 1; k < p.size(1); ++k)
    if (p.data<float>()[k] > p.data<float>()[best]) best = k;
  nlohmann::json doc = {{"kind", "classifier"}, {"model", f.model}};
  doc["source"] = {{"text", f.src}, {"tokens", tokens}};
  doc["prediction"] = {{"label", m.labels[static_cast<size_t>(best)]}, {"probability", p.data<float>()[best]}};
  doc["stacks"] = {stack_json("encoder_self", "Encoder self-attention", maps.encoder_self, tokens, tokens,
                              {"source", "source"}, f)};
  return doc;
}

}  // namespace attn
