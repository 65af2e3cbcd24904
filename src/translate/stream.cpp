#include "attn/translate/stream.h"

#include <algorithm>

#include "attn/autodiff/var.h"
#include "attn/error.h"

namespace attn {
namespace {

std::vector<std::vector<Hypothesis>> joined(const std::vector<std::vector<std::vector<Hypothesis>>>& parts) {
  std::vector<std::vector<Hypothesis>> out;
  for (const auto& p : parts) out.push_back(p.empty() ? std::vector<Hypothesis>{} : join_pieces(p));
  return out;
}

}  // namespace

bool TranslationStream::streams(const Translator& t, const TranslateOptions& o) {
  return !t.ensemble() && std::holds_alternative<Transformer>(t.model().net) && !o.search.sampling.on &&
         o.search.use_cache && !(o.use_shortlist && t.shortlist());
}

TranslationStream::TranslationStream(const Translator& t, const TranslateOptions& o, size_t max_decoding)
    : options_(o),
      search_((check(streams(t, o), "these options or this model cannot stream"), std::get<Transformer>(t.model().net)),
              t.search_options(o)),
      max_decoding_(max_decoding) {}

uint64_t TranslationStream::add(std::vector<SourceLine> lines) {
  auto r = std::make_shared<Request>();
  r->id = next_request_++;
  r->parts.resize(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    SourceLine& line = lines[i];
    r->parts[i].resize(line.pieces.size());
    for (size_t j = 0; j < line.pieces.size(); ++j) {
      std::vector<int32_t> prefix = j == 0 ? line.prefix : std::vector<int32_t>{};
      if (max_decoding_ == 0 || (waiting_.empty() && search_.size() < max_decoding_))
        search_.add(next_sentence_, line.pieces[j], prefix);
      else
        waiting_.push_back({next_sentence_, line.pieces[j], std::move(prefix)});
      where_[next_sentence_++] = {r, i, j, line.pieces[j].size()};
      ++r->left;
      ++sentences_;
      tokens_ += line.pieces[j].size();
    }
  }
  if (r->left == 0) done_.push_back(r);
  return r->id;
}

std::vector<FinishedRequest> TranslationStream::step(size_t* sentences, size_t* tokens) {
  std::vector<FinishedRequest> out;
  for (const auto& r : done_) out.push_back({r->id, joined(r->parts)});
  done_.clear();
  if (sentences) *sentences = 0;
  if (tokens) *tokens = 0;
  if (sentences_ == 0) return out;
  for (; !waiting_.empty() && search_.size() < max_decoding_; waiting_.pop_front())
    search_.add(waiting_.front().id, waiting_.front().source, waiting_.front().prefix);
  NoGrad no_grad;
  for (StreamResult& s : search_.step()) {
    const auto it = where_.find(s.id);
    Place place = std::move(it->second);
    where_.erase(it);
    --sentences_;
    tokens_ -= place.tokens;
    if (sentences) ++*sentences;
    if (tokens) *tokens += place.tokens;
    place.request->parts[place.line][place.piece] = std::move(s.hypotheses);
    if (--place.request->left == 0) out.push_back({place.request->id, joined(place.request->parts)});
  }
  return out;
}

size_t TranslationStream::remove(uint64_t id) {
  std::vector<uint64_t> pieces;  // ascending, as where_ holds them
  for (auto it = where_.begin(); it != where_.end();) {
    if (it->second.request->id != id) {
      ++it;
      continue;
    }
    pieces.push_back(it->first);
    --sentences_;
    tokens_ -= it->second.tokens;
    it = where_.erase(it);
  }
  for (auto it = waiting_.begin(); it != waiting_.end();)
    it = std::binary_search(pieces.begin(), pieces.end(), it->id) ? waiting_.erase(it) : it + 1;
  search_.remove(pieces);
  for (auto it = done_.begin(); it != done_.end();) it = (*it)->id == id ? done_.erase(it) : it + 1;
  return pieces.size();
}

}  // namespace attn
