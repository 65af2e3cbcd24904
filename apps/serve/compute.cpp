#include "compute.h"

#include "attn/attend/attend.h"
#include "attn/autodiff/var.h"
#include "attn/classify/classify.h"
#include "attn/decode/score.h"
#include "attn/error.h"

namespace attn::serve {
namespace {

// The attend document of sentence i over its best translation (the same search, run again).
nlohmann::json attention_of(const ServedModel& m, const TranslateWork& w, size_t i) {
  AttendRequest r;
  r.model = m.name;
  r.src = w.inputs[i];
  r.ids = !w.tokenized;
  r.search = w.options.search;
  r.search.n_best = 1;
  return translation_doc(m.seq2seq(), w.tokenized ? m.tokenizers() : Tokenizers{}, r);
}

}  // namespace

void answer_translations(const ServedModel& m, Job& job, const std::vector<std::vector<Hypothesis>>& found,
                         size_t first) {
  const TranslateWork& w = std::get<TranslateWork>(job.work);
  nlohmann::json answer = nlohmann::json::array();
  for (size_t i = 0; i < w.lines.size(); ++i) {
    // A sentence decoded in pieces has no alignment over the whole (as attn translate).
    answer.push_back(result_json(m.translator->result(w.lines[i], found[first + i], w.options, w.tokenized), w.options));
    if (w.attention) answer.back()["attention"] = attention_of(m, w, i);
  }
  job.finish({200, {{"model", m.name}, {"translations", std::move(answer)}}, ""});
}

namespace {

// Every job's sentences decoded together by the library's Translator::search, as attn translate
// decodes a window (sorted by length into searches of `group`, each line's target prefix, sampling
// key and shortlist as the CLI gives them), then each sentence's JSON object as attn translate
// --output-format jsonl prints it.
void translate_batch(const ServedModel& m, const std::vector<std::shared_ptr<Job>>& batch, size_t group) {
  TranslateOptions o = std::get<TranslateWork>(batch.front()->work).options;
  o.batch = static_cast<int>(group);
  o.batch_tokens = 0;
  std::vector<SourceLine> lines;
  for (const auto& job : batch) {
    const TranslateWork& w = std::get<TranslateWork>(job->work);
    lines.insert(lines.end(), w.lines.begin(), w.lines.end());
  }
  const std::vector<std::vector<Hypothesis>> found = m.translator->search(lines, o);
  size_t next = 0;
  for (const auto& job : batch) {
    answer_translations(m, *job, found, next);
    next += std::get<TranslateWork>(job->work).lines.size();
  }
}

void score_batch(const ServedModel& m, const std::vector<std::shared_ptr<Job>>& batch) {
  std::vector<std::vector<int32_t>> sources, targets;
  for (const auto& job : batch) {
    const ScoreWork& w = std::get<ScoreWork>(job->work);
    sources.insert(sources.end(), w.sources.begin(), w.sources.end());
    targets.insert(targets.end(), w.targets.begin(), w.targets.end());
  }
  const std::vector<double> scores = score_translations(m.seq2seq(), sources, targets);
  size_t next = 0;
  for (const auto& job : batch) {
    const size_t n = std::get<ScoreWork>(job->work).sources.size();
    nlohmann::json out(std::vector<double>(scores.begin() + next, scores.begin() + next + n));
    next += n;
    job->finish({200, {{"model", m.name}, {"scores", std::move(out)}}, ""});
  }
}

// Per text: the most probable label, its probability, its labels as the options ask (top_k, all
// of them above the model's) and every class's probability.
nlohmann::json class_json(const ClassifierModel& c, const float* row, const ClassifyOptions& o) {
  const int64_t classes = static_cast<int64_t>(c.labels.size());
  const std::vector<int64_t> order = top_classes(row, classes, labels_per_text(o, classes));
  nlohmann::json top = nlohmann::json::array(), all = nlohmann::json::object();
  for (int64_t k : order) top.push_back({{"label", c.labels[k]}, {"probability", row[k]}});
  for (int64_t k = 0; k < classes; ++k) all[c.labels[k]] = row[k];
  return {{"label", c.labels[order.front()]}, {"probability", row[order.front()]}, {"top", top},
          {"probabilities", all}};
}

void classify_batch(const ServedModel& m, const std::vector<std::shared_ptr<Job>>& batch) {
  std::vector<std::string> texts;
  for (const auto& job : batch) {
    const ClassifyWork& w = std::get<ClassifyWork>(job->work);
    texts.insert(texts.end(), w.texts.begin(), w.texts.end());
  }
  const ClassifierModel& c = *m.classifier;
  const Tensor p = classifier_probabilities(c.model, encode_texts(c, texts));  // [texts, classes]
  const int64_t classes = static_cast<int64_t>(c.labels.size());
  size_t next = 0;
  for (const auto& job : batch) {
    const ClassifyWork& w = std::get<ClassifyWork>(job->work);
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < w.texts.size(); ++i, ++next)
      out.push_back(class_json(c, p.data<float>() + static_cast<int64_t>(next) * classes, w.options));
    job->finish({200, {{"model", m.name}, {"classes", std::move(out)}}, ""});
  }
}

// One sentence each; a check failing on the request's values (a layer the model lacks) is the
// client's error.
void attention_batch(const ServedModel& m, const std::vector<std::shared_ptr<Job>>& batch) {
  for (const auto& job : batch) {
    const AttentionWork& w = std::get<AttentionWork>(job->work);
    try {
      const nlohmann::json doc = m.classifier ? classifier_doc(*m.classifier, w.request)
                                              : translation_doc(m.seq2seq(), m.tokenizers(), w.request);
      if (w.html) job->finish({200, nullptr, attend_html(doc)});
      else job->finish({200, doc, ""});
    } catch (const Error& e) {
      job->finish({400, {{"error", e.what()}}, ""});
    }
  }
}

}  // namespace

void compute_batch(const ServedModel& m, const std::vector<std::shared_ptr<Job>>& batch, size_t group) {
  if (batch.empty()) return;
  NoGrad no_grad;
  const Work& first = batch.front()->work;
  if (std::holds_alternative<TranslateWork>(first)) translate_batch(m, batch, group);
  else if (std::holds_alternative<ScoreWork>(first)) score_batch(m, batch);
  else if (std::holds_alternative<ClassifyWork>(first)) classify_batch(m, batch);
  else attention_batch(m, batch);
}

}  // namespace attn::serve
