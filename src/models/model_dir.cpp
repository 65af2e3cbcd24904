#include "attn/models/stored_precision.h"
#include "attn/models/model_dir.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/io/json.h"

namespace attn {

namespace fs = std::filesystem;

nlohmann::json read_json_file(const std::string& path) {
  check(fs::exists(path), path, ": no such file");
  return io::parse_json(io::read_file(path), path);
}

Transformer load_transformer(const std::string& dir) {
  check(fs::is_directory(dir), dir, ": not a model directory");
  std::string config_path = dir + "/config.json", weights_path = dir + "/model.safetensors";
  nlohmann::json j = read_json_file(config_path);
  TransformerConfig c = transformer_config_from_json(j, config_path);
  check(fs::exists(weights_path), weights_path, ": no such file");
  return transformer_from_tensors(c, load_model_weights(weights_path), weights_path);
}

void save_transformer(const Transformer& m, const std::string& dir, const nlohmann::json& extra) {
  fs::create_directories(dir);
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, v] : m.parameters()) tensors[name] = v.value();
  io::save_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}, {"producer", "attn"}});
  nlohmann::json j = transformer_config_to_json(m.config);
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  io::write_file_atomic(dir + "/config.json", j.dump(2) + "\n");
}

Transformer import_torch(const std::string& ref_dir) {
  std::string config_path = ref_dir + "/config.json", weights_path = ref_dir + "/weights.npz";
  TransformerConfig c = transformer_config_from_json(read_json_file(config_path), config_path);
  check(fs::exists(weights_path), weights_path, ": no such file");
  return transformer_from_tensors(c, io::load_npz(weights_path), weights_path);
}

void export_torch(const Transformer& m, const std::string& ref_dir) {
  const TransformerConfig& c = m.config;
  check(c.score == ScoreKind::scaled_dot, "export-torch: torch_ref.py has scaled dot-product attention only; this ",
        "model's score is ", score_name(c.score));
  check(c.positions == Positions::sinusoidal && c.activation == Activation::relu, "export-torch: torch_ref.py has ",
        "sinusoidal positions and ReLU only; this model has ", name(c.positions), " positions and ",
        name(c.activation));
  check(c.final_norm && c.scale_embeddings, "export-torch: torch_ref.py has a final LayerNorm after each stack and ",
        "embeddings scaled by sqrt(d_model); this model has ", c.final_norm ? "" : "no final norm ",
        c.scale_embeddings ? "" : "unscaled embeddings");
  fs::create_directories(ref_dir);
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, v] : m.named) tensors[name] = v.value();  // tied keys too: a state_dict
  io::save_npz(ref_dir + "/weights.npz", tensors);
  nlohmann::json j = {{"src_vocab", c.src_vocab},     {"tgt_vocab", c.tgt_vocab},
                      {"d_model", c.d_model},         {"heads", c.heads},
                      {"encoder_layers", c.encoder_layers}, {"decoder_layers", c.decoder_layers},
                      {"ff", c.d_ff},                 {"dropout", c.dropout},
                      {"norm_first", c.norm_first},   {"share_embeddings", c.share_embeddings},
                      {"tie_output", c.tie_output},   {"max_len", c.max_len},
                      {"pad_id", c.pad_id},           {"bos_id", c.bos_id},
                      {"eos_id", c.eos_id}};
  io::write_file_atomic(ref_dir + "/config.json", j.dump(2) + "\n");
}

}  // namespace attn
