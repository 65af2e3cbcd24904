#include "service.h"

#include <malloc.h>

#include <cstdio>

#include "attn/decode/id_lines.h"
#include "attn/decode/long_lines.h"
#include "attn/error.h"
#include "attn/runtime.h"
#include "compute.h"

namespace attn::serve {
namespace {

std::vector<std::string> names_of(const std::vector<std::unique_ptr<ServedModel>>& models) {
  std::vector<std::string> names;
  for (const auto& m : models) names.push_back(m->name);
  return names;
}

// beam, n_best, max_len and length_penalty, as attn translate's flags (defaults alike).
SearchOptions search_options(const nlohmann::json& body, const ServedModel& m) {
  SearchOptions o;
  o.beam = static_cast<int>(int_field(body, "beam", o.beam, 1, 64));
  o.n_best = static_cast<int>(int_field(body, "n_best", 1, 1, o.beam));
  o.max_len = static_cast<int>(int_field(body, "max_len", 0, 0, m.seq2seq->common().max_len));
  o.length_penalty = real_field(body, "length_penalty", o.length_penalty, 0, 100);
  return o;
}

// "alignment": false | true (hard) | "hard" | "soft"; "alignment_words"; "n_best" given.
cli::OutputOptions output_options(const nlohmann::json& body, bool tokenized) {
  cli::OutputOptions out;
  out.jsonl = true;
  out.n_best = body.contains("n_best");
  if (body.contains("alignment")) {
    const nlohmann::json& a = body["alignment"];
    if (a.is_boolean()) out.alignment = a.get<bool>() ? "hard" : "";
    else if (a == "hard" || a == "soft") out.alignment = a.get<std::string>();
    else throw HttpError(400, "\"alignment\" must be true, false, \"hard\" or \"soft\"");
  }
  out.alignment_words = bool_field(body, "alignment_words", false);
  if (out.alignment_words && (out.alignment.empty() || !tokenized))
    throw HttpError(400, "\"alignment_words\" needs \"alignment\" and text (not \"ids\")");
  return out;
}

std::string key_of(const SearchOptions& o) {
  char key[128];
  std::snprintf(key, sizeof key, "translate beam=%d n_best=%d max_len=%d alpha=%.17g", o.beam, o.n_best, o.max_len,
                o.length_penalty);
  return key;
}

// The sources of a translate request as the pieces attn translate decodes (--on-long split).
void add_sources(TranslateWork& w, const nlohmann::json& body, const ServedModel& m, const RequestLimits& limits) {
  const Seq2SeqCommon c = m.seq2seq->common();
  const size_t positions = static_cast<size_t>(c.max_len);
  if (body.contains("ids")) {
    w.tokenized = false;
    for (auto& ids : ids_field(body, "ids", c.src_vocab, limits)) {
      bool all_pad = true;
      for (int32_t id : ids) all_pad = all_pad && id == c.pad_id;
      if (all_pad) throw HttpError(400, "a row of \"ids\" holds only the padding id: nothing to translate");
      w.inputs.push_back(format_ids(ids));
      w.pieces.push_back(fit_ids(std::move(ids), positions, OnLong::split, "ids").pieces);
    }
    return;
  }
  if (!m.tokenizer) throw HttpError(400, "model '" + m.name + "' has no tokenizer: send token ids as \"ids\"");
  for (std::string& text : sentences_field(body, "text", limits)) {
    w.pieces.push_back(fit_text(*m.tokenizer, text, c.eos_id, positions, OnLong::split, "text").pieces);
    w.inputs.push_back(std::move(text));
  }
}

}  // namespace

Service::Service(std::vector<std::unique_ptr<ServedModel>> models, const ServiceOptions& options)
    : options_(options), models_(std::move(models)), metrics_(names_of(models_)) {
  for (const auto& m : models_) {
    const ServedModel* model = m.get();
    const int threads = options.threads;
    auto setup = [threads] {
      if (threads > 0) set_threads(threads);  // OpenMP's thread count is per thread: set it here
      flush_denormals_everywhere();
    };
    auto on_batch = [this, name = m->name, last_trim = Clock::now()](const BatchStats& s) mutable {
      const Clock::time_point now = Clock::now();
      metrics_.batch(name, s, now);
      // Hand the heap's freed pages back to the system once a second: batches of every size free
      // blocks of every size, which glibc otherwise keeps (measured: ~60 MiB more resident after
      // 10,000 requests without this, docs/serve.md).
      if (now - last_trim > std::chrono::seconds(1)) {
        malloc_trim(0);
        last_trim = now;
      }
    };
    batchers_[m->name] = std::make_unique<Batcher>(
        options.batch, [model](const std::vector<std::shared_ptr<Job>>& b) { compute_batch(*model, b); }, setup,
        on_batch);
  }
}

Service::~Service() { stop(); }

void Service::stop() {
  for (auto& [name, b] : batchers_) b->stop();
}

const ServedModel& Service::model_for(const nlohmann::json& body, Task task) const {
  const std::string name = string_field(body, "model", models_.size() == 1 ? models_.front()->name : "", false);
  if (name.empty()) throw HttpError(400, "\"model\" is missing (this server has several: GET /v1/models)");
  for (const auto& m : models_) {
    if (m->name != name) continue;
    if (task != Task::any && (task == Task::classification) != m->classifier.has_value())
      throw HttpError(400, "model '" + name + "' is a " + m->kind() +
                               (m->classifier ? ": use /v1/classify" : ", not a classifier"));
    return *m;
  }
  throw HttpError(404, "no model named '" + name + "' (GET /v1/models lists them)");
}

Outcome Service::run(const ServedModel& m, std::shared_ptr<Job> job) {
  std::future<Outcome> answer = job->future();
  if (job->sentences > options_.batch.max_queue)
    throw HttpError(413, "the request holds " + std::to_string(job->sentences) + " sentences (pieces), more than model '" +
                             m.name + "' queues at once (--max-queue " + std::to_string(options_.batch.max_queue) + ")");
  if (!batchers_.at(m.name)->submit(job))
    throw HttpError(503, "model '" + m.name + "' has " + std::to_string(options_.batch.max_queue) +
                             " sentences queued (--max-queue) or is stopping: retry later");
  if (answer.wait_for(std::chrono::milliseconds(options_.timeout_ms)) != std::future_status::ready) {
    job->abandoned = true;  // the batcher drops it if it has not started it
    throw HttpError(504, "no answer within " + std::to_string(options_.timeout_ms) + " ms (--timeout-ms)");
  }
  return answer.get();
}

Outcome Service::translate(const nlohmann::json& body) {
  const ServedModel& m = model_for(body, Task::translation);
  auto job = std::make_shared<Job>();
  TranslateWork w;
  w.search = search_options(body, m);
  add_sources(w, body, m, options_.limits);
  w.output = output_options(body, w.tokenized);
  w.attention = bool_field(body, "attention", false);
  for (const auto& sentence : w.pieces)
    if (w.attention && sentence.size() > 1)
      throw HttpError(400, "\"attention\" needs sentences within the model's positions (one is longer)");
  for (const auto& sentence : w.pieces) {
    job->sentences += sentence.size();
    for (const auto& piece : sentence) job->tokens += piece.size();
  }
  job->key = key_of(w.search);
  job->work = std::move(w);
  return run(m, std::move(job));
}

}  // namespace attn::serve
