#include "attn/models/seq2seq.h"

#include <filesystem>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/models/model_dir.h"

namespace attn {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, Var>> Seq2Seq::parameters() const {
  return is_rnn() ? rnn.parameters() : transformer.parameters();
}

Seq2Seq make_seq2seq(const TransformerConfig& config, uint64_t seed) {
  if (config.model == ModelKind::rnn) return as_seq2seq(make_rnn_seq2seq(config, seed));
  return as_seq2seq(make_transformer(config, seed));
}

Seq2Seq as_seq2seq(Transformer m) {
  Seq2Seq s;
  s.transformer = std::move(m);
  return s;
}

Seq2Seq as_seq2seq(RnnSeq2Seq m) {
  Seq2Seq s;
  s.rnn = std::move(m);
  return s;
}

void prepare(Seq2Seq& m, Precision p, Use use) {
  if (m.is_rnn()) prepare(m.rnn, p, use);
  else prepare(m.transformer, p, use);
}

Seq2Seq prepared(const Seq2Seq& m, Precision p, Use use) {
  Seq2Seq copy = m;  // the Vars are handles: the copy shares m's weights
  prepare(copy, p, use);
  return copy;
}

Var seq2seq_logits(const Seq2Seq& m, const Tensor& src, const Tensor& tgt_in, const Context& ctx,
                   const DecoderFeeding& feeding) {
  if (m.is_rnn()) return rnn_logits(m.rnn, src, tgt_in, ctx, feeding);
  return transformer_logits_scheduled(m.transformer, src, tgt_in, ctx, feeding);
}

Seq2Seq load_seq2seq(const std::string& dir) {
  check(fs::is_directory(dir), dir, ": not a model directory");
  std::string config_path = dir + "/config.json", weights_path = dir + "/model.safetensors";
  nlohmann::json j = read_json_file(config_path);
  if (!(j.contains("model") && j["model"] == "rnn")) return as_seq2seq(load_transformer(dir));
  TransformerConfig c = transformer_config_from_json(j, config_path);
  check(fs::exists(weights_path), weights_path, ": no such file");
  return as_seq2seq(rnn_seq2seq_from_tensors(c, io::load_safetensors_copied(weights_path), weights_path));
}

void save_seq2seq(const Seq2Seq& m, const std::string& dir, const nlohmann::json& extra) {
  if (!m.is_rnn()) return save_transformer(m.transformer, dir, extra);
  fs::create_directories(dir);
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, v] : m.rnn.parameters()) tensors[name] = v.value();
  io::save_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}, {"producer", "attn"}});
  nlohmann::json j = transformer_config_to_json(m.rnn.config);
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  io::write_file_atomic(dir + "/config.json", j.dump(2) + "\n");
}

}  // namespace attn
