#include "attn/decode/stream.h"

#include <optional>
#include <set>

#include "attn/decode/constraints.h"
#include "attn/decode/row_decoder.h"
#include "attn/error.h"
#include "search_steps.h"

namespace attn {

struct SearchStream::State {
  const Transformer* model = nullptr;
  SearchOptions options;
  Constraints constraints;
  std::optional<RowDecoder> decoder;           // none while no sentence is decoding
  std::vector<detail::SentenceSearch> live;    // in the decoder's row order
  std::vector<uint64_t> live_ids;
  std::vector<std::vector<int32_t>> queued;    // sources waiting for the next step
  std::vector<detail::SentenceSearch> queued_searches;
  std::vector<uint64_t> queued_ids;

  size_t live_rows() const {
    size_t rows = 0;
    for (const auto& s : live) rows += s.alive.size();
    return rows;
  }

  // The queued sentences join the decoder (started on them if none is running), their rows
  // after the live ones.
  void join() {
    if (queued.empty()) return;
    size_t row = live_rows();
    if (!decoder) decoder = start_row_decoder(*model, queued, options.use_cache, {}, true);
    else decoder->add_sources(queued);
    for (size_t i = 0; i < queued.size(); ++i) {
      queued_searches[i].alive.front().row = static_cast<int64_t>(row++);
      live.push_back(std::move(queued_searches[i]));
      live_ids.push_back(queued_ids[i]);
    }
    queued.clear();
    queued_searches.clear();
    queued_ids.clear();
  }
};

SearchStream::SearchStream(const Transformer& m, const SearchOptions& options) : s_(std::make_unique<State>()) {
  check_search_options(options, m.config.tgt_vocab);
  check(!options.sampling.on, "search stream: sampling is not a search (decode/sampling.h)");
  check(options.use_cache, "search stream: sentences join the cached decoder only");
  s_->model = &m;
  s_->options = options;
  s_->constraints = detail::constraints_of(options, m.config.eos_id);
}

SearchStream::~SearchStream() = default;
SearchStream::SearchStream(SearchStream&&) noexcept = default;
SearchStream& SearchStream::operator=(SearchStream&&) noexcept = default;

void SearchStream::add(uint64_t id, const std::vector<int32_t>& source, const std::vector<int32_t>& prefix) {
  const TransformerConfig& c = s_->model->config;
  check(!source.empty(), "search stream: sentence ", id, " has an empty source");
  for (int32_t t : source)
    check(t >= 0 && t < c.src_vocab, "search stream: sentence ", id, ": source id ", t,
          " not in the source vocabulary of ", c.src_vocab);
  check(static_cast<int64_t>(source.size()) <= c.max_len, "search stream: sentence ", id, ": ", source.size(),
        " source tokens, more than the model's ", c.max_len, " positions");
  detail::check_prefix(prefix, c.tgt_vocab, c.eos_id, id);
  const int64_t max_len =
      detail::max_len_of(c.max_len, static_cast<int64_t>(source.size()), prefix.size(), s_->options);
  s_->queued.push_back(source);
  s_->queued_searches.push_back(detail::start_sentence(0, max_len, prefix));
  s_->queued_ids.push_back(id);
}

std::vector<StreamResult> SearchStream::step() {
  NoGrad no_grad;
  State& s = *s_;
  s.join();
  std::vector<StreamResult> done;
  if (s.live.empty()) return done;
  const bool rows_left = detail::search_step(*s.decoder, s.live, s.options, s.constraints);
  // The finished leave; the others keep their order (and so their rows, renumbered by the step).
  size_t kept = 0;
  for (size_t i = 0; i < s.live.size(); ++i) {
    if (s.live[i].done) {
      done.push_back({s.live_ids[i], detail::results(s.live[i], s.options)});
      continue;
    }
    if (kept != i) {
      s.live[kept] = std::move(s.live[i]);
      s.live_ids[kept] = s.live_ids[i];
    }
    ++kept;
  }
  s.live.resize(kept);
  s.live_ids.resize(kept);
  // With no row left the decoder goes (and its caches with it); the next sentences start another.
  if (!rows_left || s.live.empty()) s.decoder.reset();
  return done;
}

void SearchStream::remove(const std::vector<uint64_t>& ids) {
  State& s = *s_;
  const std::set<uint64_t> gone(ids.begin(), ids.end());
  size_t kept = 0;
  for (size_t i = 0; i < s.queued.size(); ++i) {
    if (gone.count(s.queued_ids[i])) continue;
    if (kept != i) {
      s.queued[kept] = std::move(s.queued[i]);
      s.queued_searches[kept] = std::move(s.queued_searches[i]);
      s.queued_ids[kept] = s.queued_ids[i];
    }
    ++kept;
  }
  s.queued.resize(kept);
  s.queued_searches.resize(kept);
  s.queued_ids.resize(kept);
  // The live sentences left keep their order; their rows are renumbered as a step renumbers them.
  std::vector<int64_t> rows;
  kept = 0;
  for (size_t i = 0; i < s.live.size(); ++i) {
    if (gone.count(s.live_ids[i])) continue;
    for (detail::Prefix& p : s.live[i].alive) {
      rows.push_back(p.row);
      p.row = static_cast<int64_t>(rows.size()) - 1;
    }
    if (kept != i) {
      s.live[kept] = std::move(s.live[i]);
      s.live_ids[kept] = s.live_ids[i];
    }
    ++kept;
  }
  if (kept == s.live.size()) return;
  s.live.resize(kept);
  s.live_ids.resize(kept);
  if (s.live.empty()) s.decoder.reset();
  else s.decoder->select_rows(rows, false);
}

void warm_up(const Transformer& m, int64_t max_rows) {
  NoGrad no_grad;
  const int32_t token = m.config.eos_id;  // any id of the vocabulary
  for (int64_t rows = 1; rows <= max_rows; ++rows) {
    RowDecoder d = start_row_decoder(m, std::vector<std::vector<int32_t>>(static_cast<size_t>(rows), {token}), true, {}, true);
    d.step(std::vector<int32_t>(static_cast<size_t>(rows), m.config.bos_id));
  }
}

size_t SearchStream::size() const { return s_->live.size() + s_->queued.size(); }

size_t SearchStream::rows() const { return s_->live_rows() + s_->queued.size(); }

const SearchOptions& SearchStream::options() const { return s_->options; }

}  // namespace attn
