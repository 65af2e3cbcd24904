#include "attn/models/hf_marian.h"

#include <cstring>
#include <filesystem>

#include "attn/error.h"
#include "attn/io/safetensors.h"
#include "attn/models/model_dir.h"
#include "hf_json.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

template <class T>
T value_or(const nlohmann::json& config, const char* key, T fallback, const std::string& source) {
  return detail::hf_value(config, key, fallback, source, "a MarianConfig");
}

// The removed tensor `key` of hf, or an error naming the file and the key.
Tensor take(std::map<std::string, Tensor>& hf, const std::string& key, const std::string& source) {
  auto it = hf.find(key);
  check(it != hf.end(), source, ": no tensor \"", key, "\"");
  check(it->second.dtype() == DType::f32, source, ": \"", key, "\" is not float32 (attn reads float32 weights; ",
        "save the model in float32)");
  Tensor t = it->second;
  hf.erase(it);
  return t;
}

// The first of `keys` that hf holds (tied weights are saved once, under one of their names).
Tensor take_first(std::map<std::string, Tensor>& hf, const std::vector<std::string>& keys, const std::string& source) {
  for (const std::string& k : keys)
    if (hf.count(k)) return take(hf, k, source);
  std::string names;
  for (const std::string& k : keys) names += (names.empty() ? "\"" : ", \"") + k + "\"";
  fail(source, ": none of the tensors ", names);
}

// Rows of q, k and v stacked: in_proj_weight [3 d, d] or in_proj_bias [3 d], q first.
Tensor stack_rows(const std::vector<Tensor>& parts) {
  Shape shape = parts.front().shape();
  int64_t rows = 0;
  for (const Tensor& p : parts) rows += p.size(0);
  shape[0] = rows;
  Tensor out = Tensor::empty(shape);
  float* dst = out.data<float>();
  for (const Tensor& p : parts) {
    const Tensor c = p.contiguous();
    std::memcpy(dst, c.data<float>(), sizeof(float) * static_cast<size_t>(c.numel()));
    dst += c.numel();
  }
  return out;
}

// One attention block: HF's q_proj, k_proj, v_proj, out_proj under `hf_prefix` -> attn's under `prefix`.
void attention(std::map<std::string, Tensor>& hf, std::map<std::string, Tensor>& out, const std::string& hf_prefix,
               const std::string& prefix, const std::string& source) {
  std::vector<Tensor> w, b;
  for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
    w.push_back(take(hf, hf_prefix + "." + p + ".weight", source));
    b.push_back(take(hf, hf_prefix + "." + p + ".bias", source));
  }
  out[prefix + ".in_proj_weight"] = stack_rows(w);
  out[prefix + ".in_proj_bias"] = stack_rows(b);
  out[prefix + ".out_proj.weight"] = take(hf, hf_prefix + ".out_proj.weight", source);
  out[prefix + ".out_proj.bias"] = take(hf, hf_prefix + ".out_proj.bias", source);
}

void moved(std::map<std::string, Tensor>& hf, std::map<std::string, Tensor>& out, const std::string& from,
           const std::string& to, const std::string& source) {
  for (const char* part : {".weight", ".bias"}) out[to + part] = take(hf, from + part, source);
}

// A layer's sub-layers: transformers' name -> attn's (models/transformer.h), by stack.
struct Part {
  const char* hf;
  const char* attn;
  bool attention;  // q, k, v and out projections; else one weight and bias
};
const Part kEncoderParts[] = {{"self_attn", "self_attn", true},
                              {"self_attn_layer_norm", "norm1", false},
                              {"fc1", "linear1", false},
                              {"fc2", "linear2", false},
                              {"final_layer_norm", "norm2", false}};
const Part kDecoderParts[] = {{"self_attn", "self_attn", true},
                              {"self_attn_layer_norm", "norm1", false},
                              {"encoder_attn", "multihead_attn", true},
                              {"encoder_attn_layer_norm", "norm2", false},
                              {"fc1", "linear1", false},
                              {"fc2", "linear2", false},
                              {"final_layer_norm", "norm3", false}};

template <size_t N>
void layers(std::map<std::string, Tensor>& hf, std::map<std::string, Tensor>& out, const std::string& stack,
            int64_t count, const Part (&parts)[N], const std::string& source) {
  for (int64_t i = 0; i < count; ++i) {
    const std::string h = "model." + stack + ".layers." + std::to_string(i) + ".";
    const std::string a = "transformer." + stack + ".layers." + std::to_string(i) + ".";
    for (const Part& p : parts) {
      if (p.attention) attention(hf, out, h + p.hf, a + p.attn, source);
      else moved(hf, out, h + p.hf, a + p.attn, source);
    }
  }
}

}  // namespace

bool is_hf_marian(const std::string& dir) {
  const std::string path = dir + "/config.json";
  if (!fs::exists(path)) return false;
  const nlohmann::json j = read_json_file(path);
  return j.is_object() && j.value("model_type", "") == "marian";
}

TransformerConfig hf_marian_config(const nlohmann::json& j, const std::string& source) {
  check(j.is_object() && j.value("model_type", "") == "marian", source, ": \"model_type\" is ",
        j.is_object() && j.contains("model_type") ? j["model_type"].dump() : "missing", ", not \"marian\"");
  auto same = [&](const char* a, const char* b) {
    const int64_t x = value_or<int64_t>(j, a, 0, source), y = value_or<int64_t>(j, b, x, source);
    check(x == y, source, ": \"", a, "\" ", x, " and \"", b, "\" ", y, " differ; attn's encoder and decoder share it");
    return x;
  };
  TransformerConfig c;
  c.d_model = value_or<int64_t>(j, "d_model", 512, source);
  c.encoder_layers = value_or<int64_t>(j, "encoder_layers", 6, source);
  c.decoder_layers = value_or<int64_t>(j, "decoder_layers", 6, source);
  c.heads = same("encoder_attention_heads", "decoder_attention_heads");
  c.d_ff = same("encoder_ffn_dim", "decoder_ffn_dim");
  c.src_vocab = value_or<int64_t>(j, "vocab_size", 0, source);
  c.tgt_vocab = value_or<int64_t>(j, "decoder_vocab_size", c.src_vocab, source);
  c.share_embeddings = value_or<bool>(j, "share_encoder_decoder_embeddings", true, source) && c.src_vocab == c.tgt_vocab;
  c.tie_output = value_or<bool>(j, "tie_word_embeddings", true, source);
  c.max_len = value_or<int64_t>(j, "max_position_embeddings", 1024, source);
  c.dropout = value_or<float>(j, "dropout", 0.1f, source);
  c.scale_embeddings = value_or<bool>(j, "scale_embedding", false, source);
  c.norm_first = value_or<bool>(j, "normalize_before", false, source);
  c.final_norm = false;
  c.positions = Positions::sinusoidal_halves;
  const std::string act = value_or<std::string>(j, "activation_function", "gelu", source);
  if (act == "swish" || act == "silu") c.activation = Activation::swish;
  else if (act == "gelu") c.activation = Activation::gelu;
  else if (act == "relu") c.activation = Activation::relu;
  else fail(source, ": \"activation_function\" \"", act, "\" is not one attn has (swish, silu, gelu, relu)");
  c.pad_id = value_or<int32_t>(j, "pad_token_id", static_cast<int32_t>(c.tgt_vocab - 1), source);
  c.eos_id = value_or<int32_t>(j, "eos_token_id", 0, source);
  c.bos_id = value_or<int32_t>(j, "decoder_start_token_id", c.pad_id, source);
  check(c.pad_id >= 0 && c.pad_id < c.src_vocab, source, ": \"pad_token_id\" ", c.pad_id,
        " is not in the source vocabulary of ", c.src_vocab, " (\"vocab_size\")");
  try {
    c.validate();
  } catch (const Error& e) {
    fail(source, ": ", e.what());
  }
  return c;
}

std::map<std::string, Tensor> hf_marian_tensors(const TransformerConfig& c, std::map<std::string, Tensor> hf,
                                                const std::string& source) {
  // embed_positions are computed (sinusoidal_halves), as transformers does: a stored copy is not read
  for (const char* stack : {"encoder", "decoder"}) hf.erase(std::string("model.") + stack + ".embed_positions.weight");
  std::map<std::string, Tensor> out;
  out["src_embed.weight"] = take_first(hf, {"model.shared.weight", "model.encoder.embed_tokens.weight"}, source);
  // tied copies saved beside the shared table are the same tensor: dropped
  if (c.share_embeddings) {
    hf.erase("model.encoder.embed_tokens.weight");
    hf.erase("model.decoder.embed_tokens.weight");
  } else {
    out["tgt_embed.weight"] = take(hf, "model.decoder.embed_tokens.weight", source);
  }
  if (c.tie_output) hf.erase("lm_head.weight");
  else out["generator.weight"] = take(hf, "lm_head.weight", source);
  out["generator.bias"] = take(hf, "final_logits_bias", source).reshape({c.tgt_vocab});
  layers(hf, out, "encoder", c.encoder_layers, kEncoderParts, source);
  layers(hf, out, "decoder", c.decoder_layers, kDecoderParts, source);
  if (!hf.empty()) fail(source, ": tensor \"", hf.begin()->first, "\" is not part of a Marian model attn reads (",
                        hf.size(), " such tensors)");
  return out;
}

Transformer import_hf_marian(const std::string& dir) {
  const std::string config_path = dir + "/config.json";
  const TransformerConfig c = hf_marian_config(read_json_file(config_path), config_path);
  const std::string weights = dir + "/model.safetensors";
  if (!fs::exists(weights)) {
    check(!fs::exists(dir + "/pytorch_model.bin"), dir, "/pytorch_model.bin: attn reads model.safetensors only; ",
          "save it with model.save_pretrained(dir, safe_serialization=True)");
    fail(weights, ": no such file");
  }
  return transformer_from_tensors(c, hf_marian_tensors(c, io::load_safetensors_copied(weights), weights), weights);
}

}  // namespace attn
