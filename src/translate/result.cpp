#include "attn/translate/result.h"

#include <algorithm>
#include <cstdio>

#include "attn/decode/id_lines.h"
#include "attn/models/teacher_forced_attention.h"

namespace attn {
namespace {

std::string text_of(const ResultReader& r, const std::vector<int32_t>& ids) {
  return r.tokenizer ? r.tokenizer->decode(ids) : format_ids(ids);
}

// The alignment of a hypothesis as JSON: a Marian string (hard) or the soft rows.
nlohmann::json alignment_json(const TranslationHypothesis& h, const TranslationResult& r, const TranslateOptions& o) {
  if (!r.whole) return o.alignment == AlignmentKind::hard ? nlohmann::json("") : nlohmann::json::array();
  if (o.alignment == AlignmentKind::hard) return format_hard(hard_alignment(h.alignment));
  return h.alignment;
}

std::string alignment_text(const TranslationHypothesis& h, const TranslationResult& r, const TranslateOptions& o) {
  if (o.alignment == AlignmentKind::none) return "";
  if (!r.whole) return " ||| ";
  return " ||| " + (o.alignment == AlignmentKind::hard ? format_hard(hard_alignment(h.alignment)) : format_soft(h.alignment));
}

nlohmann::json hypothesis_json(const TranslationHypothesis& h, const TranslationResult& r, const TranslateOptions& o) {
  nlohmann::json j = {{"text", h.text},   {"tokens", h.tokens},   {"ids", h.ids},
                      {"score", h.score}, {"logprob", h.logprob}, {"finished", h.finished}};
  if (o.alignment != AlignmentKind::none) j["alignment"] = alignment_json(h, r, o);
  return j;
}

}  // namespace

std::vector<std::string> tokens_of(const ResultReader& r, const std::vector<int32_t>& ids) {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) tokens.push_back(r.tokenizer ? r.tokenizer->piece(id) : std::to_string(id));
  return tokens;
}

std::vector<int32_t> aligned_source(const ResultReader& r, const std::vector<int32_t>& source) {
  const int32_t eos = r.model->common().eos_id;
  if (!source.empty() && source.back() == eos) return {source.begin(), source.end() - 1};
  return source;
}

Matrix alignment_matrix_of(const ResultReader& r, const TranslateOptions& o, const std::vector<int32_t>& source,
                           const std::vector<int32_t>& target) {
  const Seq2Seq& m = *r.model;
  std::vector<int32_t> tgt_in = {m.common().bos_id};
  tgt_in.insert(tgt_in.end(), target.begin(), target.end());
  // Row j reads position j (input bos + target[0..j), output target[j]); the last position, after
  // the final token, is read by no row, and a translation cut at the model's positions has none.
  if (static_cast<int64_t>(tgt_in.size()) > m.common().max_len) tgt_in.pop_back();
  const AttentionMaps maps = teacher_forced_attention(m, source, tgt_in);
  const int layers = static_cast<int>(maps.cross.size());
  const int layer = o.alignment_layer > 0 ? o.alignment_layer : default_alignment_layer(layers);
  const std::vector<int32_t> src = aligned_source(r, source);
  Matrix a = alignment_matrix(maps, layer, static_cast<int64_t>(src.size()), static_cast<int64_t>(target.size()));
  if (o.alignment_words)
    a = word_matrix(a, words_of_pieces(tokens_of(r, src)), words_of_pieces(tokens_of(r, target)));
  return a;
}

std::vector<Hypothesis> join_pieces(const std::vector<std::vector<Hypothesis>>& parts) {
  if (parts.size() == 1) return parts.front();
  size_t n = 0;
  for (const auto& p : parts) n = std::max(n, p.size());
  std::vector<Hypothesis> out(n);
  for (size_t k = 0; k < n; ++k)
    for (const auto& p : parts) {
      if (p.empty()) continue;
      const Hypothesis& h = p[std::min(k, p.size() - 1)];
      out[k].tokens.insert(out[k].tokens.end(), h.tokens.begin(), h.tokens.end());
      out[k].logprob += h.logprob;
      out[k].score += h.score;
      out[k].finished = out[k].finished && h.finished;
    }
  return out;
}

TranslationResult make_result(const ResultReader& r, const TranslateOptions& o, int64_t line,
                              const std::vector<int32_t>& source, const std::vector<Hypothesis>& hyps) {
  TranslationResult out;
  out.line = line;
  out.whole = !source.empty() || hyps.empty();
  const bool align = o.alignment != AlignmentKind::none;
  if (align) out.source_tokens = tokens_of(r, aligned_source(r, source));
  // Only the best is shown unless every hypothesis is asked for.
  const size_t n = o.all_hypotheses ? hyps.size() : std::min<size_t>(hyps.size(), 1);
  for (size_t k = 0; k < n; ++k) {
    const Hypothesis& h = hyps[k];
    TranslationHypothesis t;
    t.text = text_of(r, h.tokens);
    t.tokens = tokens_of(r, h.tokens);
    t.ids = h.tokens;
    t.score = h.score;
    t.logprob = h.logprob;
    t.finished = h.finished;
    if (align && !source.empty()) t.alignment = alignment_matrix_of(r, o, source, h.tokens);
    out.hypotheses.push_back(std::move(t));
  }
  return out;
}

nlohmann::json result_json(const TranslationResult& r, const TranslateOptions& o) {
  nlohmann::json j = {{"line", r.line}};
  if (r.hypotheses.empty()) {
    j["text"] = "";
    j["tokens"] = nlohmann::json::array();
  } else {
    j.update(hypothesis_json(r.hypotheses.front(), r, o));
  }
  if (o.alignment != AlignmentKind::none) j["source_tokens"] = r.source_tokens;
  if (o.all_hypotheses) {
    j["n_best"] = nlohmann::json::array();
    for (const TranslationHypothesis& h : r.hypotheses) j["n_best"].push_back(hypothesis_json(h, r, o));
  }
  return j;
}

std::string result_text(const TranslationResult& r, const TranslateOptions& o) {
  if (!o.all_hypotheses) {
    if (r.hypotheses.empty()) return o.alignment == AlignmentKind::none ? "\n" : " ||| \n";
    return r.hypotheses.front().text + alignment_text(r.hypotheses.front(), r, o) + "\n";
  }
  // Moses/Marian n-best: sentence index (from 0) ||| tokens ||| score [||| alignment]
  std::string lines;
  char score[32];
  for (const TranslationHypothesis& h : r.hypotheses) {
    std::snprintf(score, sizeof score, "%.6f", h.score);
    lines += std::to_string(r.line - 1) + " ||| " + h.text + " ||| " + score + alignment_text(h, r, o) + "\n";
  }
  return lines;
}

}  // namespace attn
