// The continuous batch of a Transformer's translations (compute.h, translation_stream): the
// library's TranslationStream (translate/stream.h), each job one request of it.
#include <map>
#include <optional>

#include "attn/translate/stream.h"
#include "compute.h"

namespace attn::serve {
namespace {

class JobStream : public Stream {
 public:
  JobStream(const ServedModel& m, size_t max_decoding) : m_(m), max_decoding_(max_decoding) {}

  bool accepts(const Job& job) const override {
    const auto* w = std::get_if<TranslateWork>(&job.work);
    if (w == nullptr || w->attention || !TranslationStream::streams(*m_.translator, w->options)) return false;
    return sentences() == 0 || job.key == key_;
  }

  void add(std::shared_ptr<Job> job) override {
    const TranslateWork& w = std::get<TranslateWork>(job->work);
    bool blank = true;
    for (const SourceLine& line : w.lines) blank = blank && line.pieces.empty();
    if (blank) return answer_translations(m_, *job, std::vector<std::vector<Hypothesis>>(w.lines.size()), 0);
    if (sentences() == 0 && (!stream_ || key_ != job->key)) {
      stream_.emplace(*m_.translator, w.options, max_decoding_);
      key_ = job->key;
    }
    jobs_[stream_->add(w.lines)] = std::move(job);
  }

  BatchStats step() override {
    BatchStats stats;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      if (!it->second->cancelled) {
        ++it;
        continue;
      }
      ++stats.cancelled_jobs;
      stats.cancelled_sentences += stream_->remove(it->first);
      it = jobs_.erase(it);
    }
    stats.together = sentences();
    for (FinishedRequest& f : stream_->step(&stats.sentences, &stats.tokens)) {
      const auto it = jobs_.find(f.id);
      try {  // a failure writing one answer is that request's alone
        answer_translations(m_, *it->second, f.hypotheses, 0);
      } catch (...) {
        it->second->finish(failure(std::current_exception()));
      }
      jobs_.erase(it);
      ++stats.jobs;
    }
    return stats;
  }

  void fail(const Outcome& o) override {
    for (auto& [id, job] : jobs_) job->finish(o);
    jobs_.clear();
    stream_.reset();
  }

  size_t sentences() const override { return stream_ ? stream_->sentences() : 0; }
  size_t tokens() const override { return stream_ ? stream_->tokens() : 0; }

 private:
  const ServedModel& m_;
  const size_t max_decoding_;  // sentences decoding at once (a larger job waits its turn in the stream)
  std::optional<TranslationStream> stream_;
  std::string key_;
  std::map<uint64_t, std::shared_ptr<Job>> jobs_;  // the stream's request id -> its job
};

}  // namespace

std::unique_ptr<Stream> translation_stream(const ServedModel& m, size_t max_decoding) {
  if (!m.translator || !std::holds_alternative<Transformer>(m.seq2seq().net)) return nullptr;
  return std::make_unique<JobStream>(m, max_decoding);
}

}  // namespace attn::serve
