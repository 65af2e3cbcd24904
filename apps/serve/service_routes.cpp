// The routes of Service besides translation: score, classify, attention, models and metrics.
#include <algorithm>

#include "attn/classify/options.h"
#include "attn/decode/id_lines.h"
#include "service.h"

namespace attn::serve {
namespace {

// The lines of body[text_key] (tokenized, eos appended when add_eos) or of body[ids_key].
std::vector<std::vector<int32_t>> token_rows(const nlohmann::json& body, const ServedModel& m, const std::string& text_key,
                                             const std::string& ids_key, int64_t vocab, bool add_eos,
                                             const RequestLimits& limits) {
  if (body.contains(ids_key)) return ids_field(body, ids_key, vocab, limits);
  const Tokenizers tokenizers = m.tokenizers();
  if (!tokenizers) throw HttpError(400, "model '" + m.name + "' has no tokenizer: send \"" + ids_key + "\"");
  const data::Tokenizer& tok = add_eos ? *tokenizers.source : *tokenizers.target;  // the source gets the eos
  std::vector<std::vector<int32_t>> rows;
  for (const std::string& text : sentences_field(body, text_key, limits)) {
    rows.push_back(tok.encode(text));
    if (add_eos && tokenizers.source_eos) rows.back().push_back(m.seq2seq().common().eos_id);
  }
  return rows;
}

}  // namespace

Outcome Service::score(const nlohmann::json& body) {
  const ServedModel& m = model_for(body, Task::translation);
  const Seq2SeqCommon c = m.seq2seq().common();
  ScoreWork w;
  w.sources = token_rows(body, m, "source", "source_ids", c.src_vocab, true, options_.limits);
  w.targets = token_rows(body, m, "target", "target_ids", c.tgt_vocab, false, options_.limits);
  if (w.sources.size() != w.targets.size())
    throw HttpError(400, "\"source\" has " + std::to_string(w.sources.size()) + " sentences, \"target\" " +
                             std::to_string(w.targets.size()) + ": they must pair up");
  auto job = std::make_shared<Job>();
  for (size_t i = 0; i < w.sources.size(); ++i) {
    if (static_cast<int64_t>(std::max(w.sources[i].size(), w.targets[i].size() + 1)) > c.max_len)
      throw HttpError(413, "pair " + std::to_string(i) + " is longer than the model's " + std::to_string(c.max_len) +
                               " positions");
    job->tokens += w.sources[i].size() + w.targets[i].size();
  }
  job->sentences = w.sources.size();
  job->key = "score";
  job->work = std::move(w);
  return run(m, std::move(job));
}

Outcome Service::classify(const nlohmann::json& body) {
  const ServedModel& m = model_for(body, Task::classification);
  ClassifyWork w;
  w.texts = sentences_field(body, "text", options_.limits);
  // top_k and any other option of the library's table (classify/options.h), by its rules: a top_k
  // above the model's labels gives them all, as attn classify --top-k and Python's top_k do.
  w.options = table_options(body, classify_option_fields(), {"model", "text"}, "/v1/classify");
  auto job = std::make_shared<Job>();
  job->sentences = w.texts.size();
  job->tokens = w.texts.size() * static_cast<size_t>(m.classifier->model.config.pad_size);
  job->key = "classify";
  job->work = std::move(w);
  return run(m, std::move(job));
}

// {"model", "text" | "ids": [..], "target" | "target_ids", "layer", "head", "beam", "format"}
AttentionWork attention_work(const nlohmann::json& body, const ServedModel& m, const RequestLimits& limits) {
  AttentionWork w;
  AttendRequest& r = w.request;
  r.model = m.name;
  const std::string format = string_field(body, "format", "json");
  if (format != "json" && format != "html") throw HttpError(400, "\"format\" must be \"json\" or \"html\"");
  w.html = format == "html";
  r.layer = static_cast<int>(int_field(body, "layer", 0, 0, 1 << 16));
  r.head = static_cast<int>(int_field(body, "head", 0, 0, 1 << 16));
  r.search.beam = static_cast<int>(int_field(body, "beam", 1, 1, 64));
  r.ids = body.contains("ids");
  if (r.ids && (m.classifier || !body["ids"].is_array()))
    throw HttpError(400, "\"ids\" is an array of token ids, for a translation model");
  if (r.ids) r.src = format_ids(ids_field({{"ids", {body["ids"]}}}, "ids", m.seq2seq().common().src_vocab, limits)[0]);
  else if (!m.tokenizers() && !m.classifier) throw HttpError(400, "model '" + m.name + "' has no tokenizer: send \"ids\"");
  else r.src = sentences_field({{"text", string_field(body, "text", "", true)}}, "text", limits)[0];
  if (body.contains("target_ids") && r.ids)
    r.tgt = format_ids(ids_field({{"ids", {body["target_ids"]}}}, "ids", m.seq2seq().common().tgt_vocab, limits)[0]);
  else if (body.contains("target"))
    r.tgt = sentences_field({{"target", string_field(body, "target", "")}}, "target", limits)[0];
  return w;
}

Outcome Service::attention(const nlohmann::json& body) {
  const ServedModel& m = model_for(body, Task::any);
  AttentionWork w = attention_work(body, m, options_.limits);
  auto job = std::make_shared<Job>();
  job->sentences = 1;
  job->tokens = w.request.src.size();
  job->key = "attention";
  job->work = std::move(w);
  return run(m, std::move(job));
}

nlohmann::json Service::models() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : models_) list.push_back(m->describe());
  return {{"models", list}};
}

std::string Service::metrics_text() {
  return metrics_.render([this](const std::string& name) { return batchers_.at(name)->queued_sentences(); },
                         Clock::now()) +
         "# HELP attn_answer_memory_reserved_bytes What the answers in flight reserve of --max-answer-memory.\n"
         "# TYPE attn_answer_memory_reserved_bytes gauge\n"
         "attn_answer_memory_reserved_bytes " + std::to_string(budget_.in_use()) + "\n"
         "# HELP attn_answer_memory_bytes The bytes answers in flight may reserve (--answer-memory-mib).\n"
         "# TYPE attn_answer_memory_bytes gauge\n"
         "attn_answer_memory_bytes " + std::to_string(budget_.capacity()) + "\n";
}

}  // namespace attn::serve
