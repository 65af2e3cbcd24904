#include "answer_size.h"

#include <algorithm>

#include "attn/decode/search.h"
#include "attn/error.h"

namespace attn::serve {
namespace {

size_t token_bytes(const ServedModel& m) { return m.token_json_bytes + 1; }

size_t source_tokens(const ServedModel& m, const AttendRequest& r) {
  if (r.ids) {  // "5 9 14"
    size_t n = 0;
    bool in = false;
    for (char c : r.src) {
      n += c != ' ' && !in;
      in = c != ' ';
    }
    return n + 1;  // eos
  }
  if (m.classifier) return static_cast<size_t>(m.classifier->model.config.pad_size);
  return m.tokenizers().source->encode(r.src).size() + 1;
}

// A stack of `layers` x `heads` maps of queries x keys (one layer or head when `layer` or `head`
// chooses it), with each head's summary.
size_t stack_bytes(int64_t layers, int64_t heads, size_t queries, size_t keys, int layer, int head) {
  const size_t l = layer > 0 ? 1 : static_cast<size_t>(layers), h = head > 0 ? 1 : static_cast<size_t>(heads);
  return l * h * (queries * (keys * kWeightBytes + 2) + 512);
}

// Every stack of a translation model's document over S source and T target positions.
size_t maps_bytes(const Seq2Seq& s, size_t S, size_t T, int layer, int head) {
  if (const auto* t = std::get_if<Transformer>(&s.net)) {
    const TransformerConfig& c = t->config;
    return stack_bytes(c.encoder_layers, c.heads, S, S, layer, head) +
           stack_bytes(c.decoder_layers, c.heads, T, T, layer, head) +
           stack_bytes(c.decoder_layers, c.heads, T, S, layer, head);
  }
  return stack_bytes(1, 1, T, S, layer, head);  // the RNN's one attention
}

}  // namespace

size_t attention_answer_bytes(const ServedModel& m, const AttentionWork& w) {
  const AttendRequest& r = w.request;
  const size_t S = source_tokens(m, r);
  const size_t frame = 8192 + (w.html ? 65536 : 0);  // the document's other fields; the page's script
  if (m.classifier) {
    const ClassifierConfig& c = m.classifier->model.config;
    return frame + 4 * S * 64 + stack_bytes(c.layers, c.heads, S, S, r.layer, r.head);
  }
  const int64_t positions = m.seq2seq().common().max_len;
  // A source past the model's positions is refused (attend's error): its answer is the error.
  if (S > static_cast<size_t>(positions)) return frame;
  // the target: the decoder's inputs, bos first, as long as the search's longest output, or the
  // target given (at most a token per byte)
  const size_t T = 1 + (r.tgt.empty() ? static_cast<size_t>(max_output_tokens(positions, static_cast<int64_t>(S), 0, r.search))
                                      : std::min(r.tgt.size() + 1, static_cast<size_t>(positions)));
  return frame + 4 * (S + T) * token_bytes(m) + maps_bytes(m.seq2seq(), S, T, r.layer, r.head);
}

size_t translation_answer_bytes(const ServedModel& m, const TranslateWork& w) {
  const int64_t positions = m.seq2seq().common().max_len;
  const TranslateOptions& o = w.options;
  const size_t per_token = 2 * token_bytes(m) + 12;  // "text" and "tokens", and "ids"
  const size_t hypotheses = static_cast<size_t>(o.all_hypotheses ? o.search.n_best + 1 : 1);
  size_t bytes = 64;
  for (const SourceLine& line : w.lines) {
    size_t S = 0, T = 0;
    for (const auto& piece : line.pieces) {
      S += piece.size();
      T += static_cast<size_t>(max_output_tokens(positions, static_cast<int64_t>(piece.size()), line.prefix.size(), o.search));
    }
    size_t per_hypothesis = 128 + T * per_token;
    if (o.alignment == AlignmentKind::soft) per_hypothesis += T * (S * kWeightBytes + 2);
    else if (o.alignment == AlignmentKind::hard) per_hypothesis += T * 24;
    bytes += 128 + S * token_bytes(m) + hypotheses * per_hypothesis;
    // "attention": the sentence's document (its best translation, searched again)
    if (w.attention) bytes += 8192 + 4 * (S + T + 1) * token_bytes(m) + maps_bytes(m.seq2seq(), S, T + 1, 0, 0);
  }
  return bytes;
}

AnswerSize answer_size(const ServedModel& m, const Work& w) {
  if (const auto* t = std::get_if<TranslateWork>(&w))
    return {translation_answer_bytes(m, *t),
            "send fewer sentences at once, or ask for less of each (n_best, \"alignment\": \"soft\", \"attention\")"};
  if (const auto* a = std::get_if<AttentionWork>(&w))
    return {attention_answer_bytes(m, *a), "ask for one \"layer\" or \"head\", or send a shorter sentence"};
  if (const auto* s = std::get_if<ScoreWork>(&w)) return {64 + 32 * s->sources.size(), "send fewer pairs at once"};
  const auto& c = std::get<ClassifyWork>(w);
  size_t per_text = 128;  // every label twice ("top" and "probabilities") with its probability
  for (const std::string& label : m.classifier->labels) per_text += 2 * (nlohmann::json(label).dump().size() + 48);
  return {64 + per_text * c.texts.size(), "send fewer texts at once"};
}

size_t AnswerBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

std::shared_ptr<void> AnswerBudget::take(size_t bytes, std::chrono::steady_clock::time_point deadline) {
  bytes = std::min(bytes, capacity_);
  std::unique_lock<std::mutex> lock(mutex_);
  if (!freed_.wait_until(lock, deadline, [&] { return used_ + bytes <= capacity_; })) return nullptr;
  used_ += bytes;
  // The deleter gives the bytes back; the pointer itself points at nothing that is read.
  return std::shared_ptr<void>(static_cast<void*>(this), [this, bytes](void*) { give_back(bytes); });
}

void AnswerBudget::give_back(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    used_ -= bytes;
  }
  freed_.notify_all();
}

}  // namespace attn::serve
