#include "translate_output.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "attn/decode/alignment.h"
#include "attn/decode/id_lines.h"
#include "attn/error.h"
#include "attn/models/teacher_forced_attention.h"

namespace attn::cli {
namespace {

std::string text_of(const LineOutput& out, const std::vector<int32_t>& ids) {
  return out.tokenizer ? out.tokenizer->decode(ids) : format_ids(ids);
}

// The alignment of hypothesis `target` to `source` (alignment_matrix_of): a Marian string, or
// the soft rows as JSON arrays when as_json.
nlohmann::json alignment_of(const LineOutput& out, const std::vector<int32_t>& source,
                            const std::vector<int32_t>& target, bool as_json) {
  // A line decoded in pieces (--on-long split) has no one source to align to: the alignment is
  // empty, as in the text format.
  if (source.empty()) return as_json && out.options.alignment != "hard" ? nlohmann::json::array() : nlohmann::json("");
  const Matrix a = alignment_matrix_of(out, source, target);
  if (out.options.alignment == "hard") return format_hard(hard_alignment(a));
  if (as_json) return a;
  return format_soft(a);
}

nlohmann::json hypothesis_json(const LineOutput& out, const std::vector<int32_t>& source, const Hypothesis& h) {
  nlohmann::json j = {{"text", text_of(out, h.tokens)}, {"tokens", tokens_of(out, h.tokens)},
                      {"ids", h.tokens},                {"score", h.score},
                      {"logprob", h.logprob},           {"finished", h.finished}};
  if (!out.options.alignment.empty()) j["alignment"] = alignment_of(out, source, h.tokens, true);
  return j;
}

}  // namespace

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

nlohmann::json line_json(const LineOutput& out, int64_t number, const std::vector<int32_t>& source,
                         const std::vector<Hypothesis>& hyps) {
  nlohmann::json j = {{"line", number}};
  if (hyps.empty()) {
    j["text"] = "";
    j["tokens"] = nlohmann::json::array();
  } else {
    j.update(hypothesis_json(out, source, hyps.front()));
  }
  if (!out.options.alignment.empty()) j["source_tokens"] = tokens_of(out, aligned_source(out, source));
  if (out.options.n_best) {
    j["n_best"] = nlohmann::json::array();
    for (const Hypothesis& h : hyps) j["n_best"].push_back(hypothesis_json(out, source, h));
  }
  return j;
}

// The tokens as strings: SentencePiece pieces, or the ids themselves in --ids mode.
std::vector<std::string> tokens_of(const LineOutput& out, const std::vector<int32_t>& ids) {
  std::vector<std::string> tokens;
  for (int32_t id : ids) tokens.push_back(out.tokenizer ? out.tokenizer->piece(id) : std::to_string(id));
  return tokens;
}

// The source tokens alignments index: the encoder's input without its final eos.
std::vector<int32_t> aligned_source(const LineOutput& out, const std::vector<int32_t>& source) {
  const int32_t eos = out.model->common().eos_id;
  if (!source.empty() && source.back() == eos) return {source.begin(), source.end() - 1};
  return source;
}

Matrix alignment_matrix_of(const LineOutput& out, const std::vector<int32_t>& source,
                           const std::vector<int32_t>& target) {
  const Seq2Seq& m = *out.model;
  const OutputOptions& o = out.options;
  std::vector<int32_t> tgt_in = {m.common().bos_id};
  tgt_in.insert(tgt_in.end(), target.begin(), target.end());
  // Row j reads position j (input bos + target[0..j), output target[j]); the last position, after
  // the final token, is read by no row, and a translation cut at the model's positions has none.
  if (static_cast<int64_t>(tgt_in.size()) > m.common().max_len) tgt_in.pop_back();
  const AttentionMaps maps = teacher_forced_attention(m, source, tgt_in);
  const int layers = static_cast<int>(maps.cross.size());
  const int layer = o.alignment_layer > 0 ? o.alignment_layer : default_alignment_layer(layers);
  const std::vector<int32_t> src = aligned_source(out, source);
  Matrix a = alignment_matrix(maps, layer, static_cast<int64_t>(src.size()), static_cast<int64_t>(target.size()));
  if (o.alignment_words)
    a = word_matrix(a, words_of_pieces(tokens_of(out, src)), words_of_pieces(tokens_of(out, target)));
  return a;
}

std::string format_line(const LineOutput& out, int64_t number, const std::vector<int32_t>& source,
                        const std::vector<Hypothesis>& hyps) {
  if (out.options.jsonl)
    return line_json(out, number, source, hyps).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const bool aligned = !out.options.alignment.empty();
  auto with_alignment = [&](const std::vector<int32_t>& target) {
    return aligned ? " ||| " + (source.empty() ? std::string() : alignment_of(out, source, target, false).get<std::string>())
                   : std::string();
  };
  if (!out.options.n_best) {
    const std::vector<int32_t> best = hyps.empty() ? std::vector<int32_t>() : hyps.front().tokens;
    return text_of(out, best) + with_alignment(best) + "\n";
  }
  // Moses/Marian n-best: sentence index (from 0) ||| tokens ||| score [||| alignment]
  std::string lines;
  char score[32];
  for (const Hypothesis& h : hyps) {
    std::snprintf(score, sizeof score, "%.6f", h.score);
    lines += std::to_string(number - 1) + " ||| " + text_of(out, h.tokens) + " ||| " + score + with_alignment(h.tokens) + "\n";
  }
  return lines;
}

}  // namespace attn::cli
