#include "attn/decode/text.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"

namespace attn {

TranslationModel load_translation_model(const std::string& dir) {
  nlohmann::json config = read_json_file(dir + "/config.json");
  check(config.contains("tokenizer") && config["tokenizer"].is_string(), dir,
        "/config.json: no \"tokenizer\" entry (a model made by import-torch has none: use --ids)");
  std::string spm = dir + "/" + config["tokenizer"].get<std::string>();
  return TranslationModel{load_seq2seq(dir), data::Tokenizer::load(spm)};
}

namespace {

template <typename Model>
std::vector<std::vector<int32_t>> translate_ids_of(const Model& m, int32_t eos_id,
                                                   const std::vector<std::vector<int32_t>>& sources,
                                                   const SearchOptions& options, int64_t batch) {
  std::vector<std::vector<int32_t>> out(sources.size());
  // Longest first, so the batches hold sentences of similar length.
  std::vector<size_t> order;
  for (size_t i = 0; i < sources.size(); ++i)
    if (!sources[i].empty()) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sources[a].size() > sources[b].size(); });
  for (size_t at = 0; at < order.size(); at += static_cast<size_t>(batch)) {
    size_t end = std::min(order.size(), at + static_cast<size_t>(batch));
    std::vector<std::vector<int32_t>> chunk;
    for (size_t i = at; i < end; ++i) {
      chunk.push_back(sources[order[i]]);
      chunk.back().push_back(eos_id);
    }
    auto hyps = search(m, chunk, options);
    for (size_t i = at; i < end; ++i) out[order[i]] = hyps[i - at].front().tokens;
  }
  return out;
}

}  // namespace

std::vector<std::vector<int32_t>> translate_ids(const Transformer& m,
                                                const std::vector<std::vector<int32_t>>& sources,
                                                const SearchOptions& options, int64_t batch) {
  return translate_ids_of(m, m.config.eos_id, sources, options, batch);
}

std::vector<std::vector<int32_t>> translate_ids(const Seq2Seq& m, const std::vector<std::vector<int32_t>>& sources,
                                                const SearchOptions& options, int64_t batch) {
  return translate_ids_of(m, m.common().eos_id, sources, options, batch);
}

std::vector<std::string> translate_text(const TranslationModel& tm, const std::vector<std::string>& lines,
                                        const SearchOptions& options, int64_t batch) {
  std::vector<std::vector<int32_t>> sources;
  for (const std::string& l : lines) sources.push_back(tm.tokenizer.encode(l));
  auto ids = translate_ids(tm.model, sources, options, batch);
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) out.push_back(sources[i].empty() ? "" : tm.tokenizer.decode(ids[i]));
  return out;
}

}  // namespace attn
