// The continuous batch of a Transformer's translations (compute.h, translation_stream).
#include <map>
#include <optional>

#include "attn/autodiff/var.h"
#include "attn/decode/stream.h"
#include "compute.h"

namespace attn::serve {
namespace {

class TranslationStream : public Stream {
 public:
  explicit TranslationStream(const ServedModel& m) : m_(m), model_(std::get<Transformer>(m.seq2seq().net)) {}

  bool accepts(const Job& job) const override {
    const auto* w = std::get_if<TranslateWork>(&job.work);
    if (w == nullptr || w->options.search.sampling.on || !w->options.search.use_cache || w->options.use_shortlist ||
        w->attention)
      return false;
    return sentences_ == 0 || job.key == key_;
  }

  void add(std::shared_ptr<Job> job) override {
    const TranslateWork& w = std::get<TranslateWork>(job->work);
    if (sentences_ == 0 && (!search_ || key_ != job->key)) {
      search_.emplace(model_, w.options.search);
      key_ = job->key;
    }
    auto open = std::make_shared<Open>();
    open->job = job;
    open->parts.resize(w.lines.size());
    for (size_t i = 0; i < w.lines.size(); ++i) {
      const SourceLine& line = w.lines[i];
      open->parts[i].resize(line.pieces.size());
      for (size_t j = 0; j < line.pieces.size(); ++j) {
        search_->add(next_id_, line.pieces[j], j == 0 ? line.prefix : std::vector<int32_t>{});
        where_[next_id_++] = {open, i, j};
        ++open->left;
        ++sentences_;
        tokens_ += line.pieces[j].size();
      }
    }
    if (open->left == 0) answer(*open);  // blank lines only
  }

  BatchStats step() override {
    NoGrad no_grad;
    BatchStats stats;
    stats.together = sentences_;
    for (StreamResult& r : search_->step()) {
      const auto it = where_.find(r.id);
      Place place = std::move(it->second);
      where_.erase(it);
      const size_t tokens = std::get<TranslateWork>(place.open->job->work).lines[place.line].pieces[place.piece].size();
      --sentences_;
      tokens_ -= tokens;
      ++stats.sentences;
      stats.tokens += tokens;
      place.open->parts[place.line][place.piece] = std::move(r.hypotheses);
      if (--place.open->left == 0) {
        answer(*place.open);
        ++stats.jobs;
      }
    }
    return stats;
  }

  void fail(const Outcome& o) override {
    for (auto& [id, place] : where_) place.open->job->finish(o);  // once per job (Job::finish)
    where_.clear();
    search_.reset();
    sentences_ = tokens_ = 0;
  }

  size_t sentences() const override { return sentences_; }
  size_t tokens() const override { return tokens_; }

 private:
  // A job in the stream: its lines' pieces' hypotheses as they come back.
  struct Open {
    std::shared_ptr<Job> job;
    std::vector<std::vector<std::vector<Hypothesis>>> parts;  // [line][piece]
    size_t left = 0;
  };
  struct Place {
    std::shared_ptr<Open> open;
    size_t line = 0, piece = 0;
  };

  void answer(Open& open) {
    std::vector<std::vector<Hypothesis>> found;
    for (const auto& parts : open.parts) found.push_back(parts.empty() ? std::vector<Hypothesis>{} : join_pieces(parts));
    answer_translations(m_, *open.job, found, 0);
  }

  const ServedModel& m_;
  const Transformer& model_;
  std::optional<SearchStream> search_;
  std::string key_;
  std::map<uint64_t, Place> where_;  // the stream's sentence id -> its job, line and piece
  uint64_t next_id_ = 0;
  size_t sentences_ = 0, tokens_ = 0;
};

}  // namespace

std::unique_ptr<Stream> translation_stream(const ServedModel& m) {
  if (!m.translator || !std::holds_alternative<Transformer>(m.seq2seq().net)) return nullptr;
  return std::make_unique<TranslationStream>(m);
}

}  // namespace attn::serve
