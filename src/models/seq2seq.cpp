#include "attn/models/stored_precision.h"
#include "attn/models/seq2seq.h"

#include <filesystem>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/model_dir.h"

namespace attn {

namespace fs = std::filesystem;

ModelKind kind_of(const Seq2SeqConfig& c) {
  return std::holds_alternative<TransformerConfig>(c) ? ModelKind::transformer : ModelKind::rnn;
}

namespace {

template <class Config>
Seq2SeqCommon common_fields(const Config& c) {
  return {c.src_vocab, c.tgt_vocab, c.d_model, c.max_len, c.pad_id, c.bos_id, c.eos_id, c.dropout, c.score};
}

}  // namespace

Seq2SeqCommon common_of(const Seq2SeqConfig& config) {
  return std::visit([](const auto& c) { return common_fields(c); }, config);
}

Seq2SeqCommon Seq2Seq::common() const {
  return std::visit([](const auto& m) { return common_fields(m.config); }, net);
}

void validate(const Seq2SeqConfig& config) {
  std::visit([](const auto& c) { c.validate(); }, config);
}

Seq2SeqConfig seq2seq_config_from_json(const nlohmann::json& j, const std::string& source) {
  ModelKind kind = ModelKind::transformer;
  if (j.is_object() && j.contains("model")) {
    check(j["model"].is_string(), source, ": key 'model' must be a string, got ", j["model"].dump());
    parse(j["model"].get<std::string>(), &kind, source + ": model");
  }
  if (kind == ModelKind::rnn) return rnn_config_from_json(j, source);
  return transformer_config_from_json(j, source);
}

nlohmann::json seq2seq_config_to_json(const Seq2SeqConfig& config) {
  if (const auto* rnn = std::get_if<RnnConfig>(&config)) return rnn_config_to_json(*rnn);
  return transformer_config_to_json(std::get<TransformerConfig>(config));
}

Seq2SeqConfig Seq2Seq::config() const {
  return std::visit([](const auto& m) -> Seq2SeqConfig { return m.config; }, net);
}

int Seq2Seq::cross_attention_layers() const {
  if (const auto* t = std::get_if<Transformer>(&net)) return static_cast<int>(t->config.decoder_layers);
  return 1;
}

std::vector<std::pair<std::string, Var>> Seq2Seq::parameters() const {
  return std::visit([](const auto& m) { return m.parameters(); }, net);
}

Seq2Seq make_seq2seq(const Seq2SeqConfig& config, uint64_t seed) {
  if (const auto* rnn = std::get_if<RnnConfig>(&config)) return as_seq2seq(make_rnn_seq2seq(*rnn, seed));
  return as_seq2seq(make_transformer(std::get<TransformerConfig>(config), seed));
}

void prepare(Seq2Seq& m, Precision p, Use use) {
  std::visit([&](auto& net) { prepare(net, p, use); }, m.net);
}

Seq2Seq prepared(const Seq2Seq& m, Precision p, Use use) {
  Seq2Seq copy = m;  // the Vars are handles: the copy shares m's weights
  prepare(copy, p, use);
  return copy;
}

Var seq2seq_logits(const Seq2Seq& m, const Tensor& src, const Tensor& tgt_in, const Context& ctx,
                   const DecoderFeeding& feeding) {
  if (const auto* rnn = std::get_if<RnnSeq2Seq>(&m.net)) return rnn_logits(*rnn, src, tgt_in, ctx, feeding);
  return transformer_logits_scheduled(std::get<Transformer>(m.net), src, tgt_in, ctx, feeding);
}

Seq2Seq seq2seq_from_tensors(const Seq2SeqConfig& config, std::map<std::string, Tensor> tensors,
                             const std::string& source) {
  if (const auto* rnn = std::get_if<RnnConfig>(&config))
    return as_seq2seq(rnn_seq2seq_from_tensors(*rnn, std::move(tensors), source));
  return as_seq2seq(transformer_from_tensors(std::get<TransformerConfig>(config), std::move(tensors), source));
}

Seq2Seq load_seq2seq(const std::string& dir) {
  check(fs::is_directory(dir), dir, ": not a model directory");
  std::string config_path = dir + "/config.json", weights_path = dir + "/model.safetensors";
  Seq2SeqConfig c = seq2seq_config_from_json(read_json_file(config_path), config_path);
  check(fs::exists(weights_path), weights_path, ": no such file");
  return seq2seq_from_tensors(c, load_model_weights(weights_path), weights_path);
}

void save_seq2seq(const Seq2Seq& m, const std::string& dir, const nlohmann::json& extra) {
  fs::create_directories(dir);
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, v] : m.parameters()) tensors[name] = v.value();
  io::save_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}, {"producer", "attn"}});
  nlohmann::json j = seq2seq_config_to_json(m.config());
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  io::write_file_atomic(dir + "/config.json", j.dump(2) + "\n");
}

}  // namespace attn
