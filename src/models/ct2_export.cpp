// attn's Transformer as a CTranslate2 TransformerSpec (models/ct2.h: export_ct2): the inverse of
// ct2.cpp's mapping, with every scalar the spec's Python side writes, so that
// ctranslate2.Translator runs it as CTranslate2's own converters' output.
#include <unistd.h>

#include <filesystem>
#include <set>

#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/models/ct2.h"
#include "attn/models/model_dir.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using io::Ct2DType;
using io::Ct2ModelBin;

const Tensor& tensor(const Transformer& m, const std::string& key) {
  auto it = m.named.find(key);
  check(it != m.named.end(), "export to CTranslate2: the model has no tensor \"", key, "\"");
  return it->second.value();
}

// Each of the target's ids as a token: the tokenizer's pieces, then (a model whose vocabulary is
// larger than its tokenizer's) placeholders no text produces. CTranslate2 looks tokens up by
// string, so they must be distinct.
std::vector<std::string> tokens_of(const data::Tokenizer& t, int64_t size, const std::string& side) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < size; ++i)
    out.push_back(i < t.vocab_size() ? t.piece(static_cast<int32_t>(i)) : "<attn_unused_" + std::to_string(i) + ">");
  std::set<std::string> seen;
  for (const std::string& p : out)
    check(seen.insert(p).second, "export to CTranslate2: the ", side, " vocabulary has the token \"", p,
          "\" twice; CTranslate2 finds ids by token");
  return out;
}

// config.json's "tokenizer": each side's SentencePiece model file
std::string spm_file(const nlohmann::json& config, const char* side) {
  const nlohmann::json& t = config.at("tokenizer");
  if (t.is_string()) return t.get<std::string>();
  return t.at(side).at("sentencepiece").get<std::string>();
}

}  // namespace

Ct2ModelBin ct2_model_bin(const Transformer& m) {
  const TransformerConfig& c = m.config;
  check(c.activation == Activation::relu || c.activation == Activation::swish || c.activation == Activation::gelu,
        "export to CTranslate2: activation ", name(c.activation), " has no CTranslate2 equivalent");
  Ct2ModelBin b;
  auto put = [&](const std::string& key, const Tensor& t) { b.variables[key] = io::ct2_from_float(t); };
  auto scalar = [&](const std::string& key, double v, Ct2DType t) { b.variables[key] = io::ct2_scalar(v, t); };
  const int64_t d = c.d_model;
  // the spec's options (specs/transformer_spec.py), as its Python side writes them
  const int activation = c.activation == Activation::relu ? 0 : c.activation == Activation::swish ? 2 : 3;
  for (const std::string s : {"encoder", "decoder"}) {
    scalar(s + "/num_heads", static_cast<double>(c.heads), Ct2DType::i16);
    scalar(s + "/pre_norm", c.norm_first, Ct2DType::i8);
    scalar(s + "/activation", activation, Ct2DType::i8);
    scalar(s + "/scale_embeddings", c.scale_embeddings, Ct2DType::i8);
  }
  for (const char* off : {"decoder/alibi", "decoder/alibi_use_positive_positions", "decoder/scale_alibi",
                          "decoder/start_from_zero_embedding", "encoder/multi_query_attention"})
    scalar(off, 0, Ct2DType::i8);
  scalar("encoder/embeddings_merge", 0, Ct2DType::i8);
  scalar("decoder/alignment_heads", 1, Ct2DType::i16);
  scalar("decoder/alignment_layer", -1, Ct2DType::i16);
  // embeddings, the output layer and one position table for both stacks, shared ones as aliases
  put("encoder/embeddings_0/weight", tensor(m, "src_embed.weight"));
  if (c.share_embeddings) b.aliases["decoder/embeddings/weight"] = "encoder/embeddings_0/weight";
  else put("decoder/embeddings/weight", tensor(m, "tgt_embed.weight"));
  const std::string tgt_embed = c.share_embeddings ? "encoder/embeddings_0/weight" : "decoder/embeddings/weight";
  if (c.tie_output) b.aliases["decoder/projection/weight"] = tgt_embed;
  else put("decoder/projection/weight", tensor(m, "generator.weight"));
  put("decoder/projection/bias", tensor(m, "generator.bias"));
  // a stored table (CTranslate2's PositionEmbedding, row t = position t): attn's sinusoids or learned rows
  put("encoder/position_encodings/encodings", c.positions == Positions::learned ? tensor(m, "pos_embed.weight") : m.pe);
  b.aliases["decoder/position_encodings/encodings"] = "encoder/position_encodings/encodings";
  auto linear = [&](const std::string& to, const std::string& from) {
    put(to + "/weight", tensor(m, from + "weight"));
    put(to + "/bias", tensor(m, from + "bias"));
  };
  auto norm = [&](const std::string& to, const std::string& from) {
    put(to + "/gamma", tensor(m, from + ".weight"));
    put(to + "/beta", tensor(m, from + ".bias"));
  };
  for (int64_t i = 0; i < c.encoder_layers; ++i) {
    const std::string s = "encoder/layer_" + std::to_string(i), a = "transformer.encoder.layers." + std::to_string(i) + ".";
    linear(s + "/self_attention/linear_0", a + "self_attn.in_proj_");
    linear(s + "/self_attention/linear_1", a + "self_attn.out_proj.");
    norm(s + "/self_attention/layer_norm", a + "norm1");
    linear(s + "/ffn/linear_0", a + "linear1.");
    linear(s + "/ffn/linear_1", a + "linear2.");
    norm(s + "/ffn/layer_norm", a + "norm2");
  }
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    const std::string s = "decoder/layer_" + std::to_string(i), a = "transformer.decoder.layers." + std::to_string(i) + ".";
    linear(s + "/self_attention/linear_0", a + "self_attn.in_proj_");
    linear(s + "/self_attention/linear_1", a + "self_attn.out_proj.");
    norm(s + "/self_attention/layer_norm", a + "norm1");
    // cross-attention: attn's in_proj rows [0, d) are the query (linear_0), [d, 3d) the key and value
    // (linear_1); ct2_from_float copies each view's values
    const Tensor& w = tensor(m, a + "multihead_attn.in_proj_weight");
    const Tensor& bias = tensor(m, a + "multihead_attn.in_proj_bias");
    put(s + "/attention/linear_0/weight", w.slice(0, 0, d));
    put(s + "/attention/linear_0/bias", bias.slice(0, 0, d));
    put(s + "/attention/linear_1/weight", w.slice(0, d, 3 * d));
    put(s + "/attention/linear_1/bias", bias.slice(0, d, 3 * d));
    linear(s + "/attention/linear_2", a + "multihead_attn.out_proj.");
    norm(s + "/attention/layer_norm", a + "norm2");
    linear(s + "/ffn/linear_0", a + "linear1.");
    linear(s + "/ffn/linear_1", a + "linear2.");
    norm(s + "/ffn/layer_norm", a + "norm3");
  }
  if (c.final_norm) {
    norm("encoder/layer_norm", "transformer.encoder.norm");
    norm("decoder/layer_norm", "transformer.decoder.norm");
  }
  return b;
}

void export_ct2(const std::string& model_dir, const std::string& out_dir) {
  const nlohmann::json config = read_json_file(model_dir + "/config.json");
  check(config.contains("tokenizer"), model_dir, "/config.json: no \"tokenizer\" entry; a CTranslate2 model needs ",
        "its vocabulary's tokens (a model trained on token ids has none)");
  TranslationModel tm = load_translation_model(model_dir);
  check(tm.model.kind() == ModelKind::transformer, model_dir, ": an RNN model; CTranslate2's TransformerSpec holds ",
        "Transformers only");
  const Transformer& m = std::get<Transformer>(tm.model.net);
  const TransformerConfig& c = m.config;
  check(!config.contains("suppress_ids"), model_dir, "/config.json: \"suppress_ids\" has no CTranslate2 equivalent");
  check(!fs::exists(out_dir), out_dir, ": exists already; attn export writes a new directory");
  const std::vector<std::string> source = tokens_of(*tm.tokenizers.source, c.src_vocab, "source");
  const std::vector<std::string> target = tokens_of(*tm.tokenizers.target, c.tgt_vocab, "target");
  const data::Tokenizer& t = *tm.tokenizers.target;
  const std::string unk = t.piece(t.piece_to_id("\x01 attn: a piece no vocabulary has \x01"));
  // CTranslate2's config.json (specs/model_spec.py's SequenceToSequenceModelConfig), and attn's
  // padding token, which import_ct2 reads back instead of adding one (CTranslate2 ignores it)
  const nlohmann::json ct2_config = {
      {"bos_token", target[c.bos_id]},        {"eos_token", target[c.eos_id]},
      {"decoder_start_token", target[c.bos_id]}, {"unk_token", unk},
      {"add_source_bos", false},               {"add_source_eos", tm.tokenizers.source_eos},
      {"layer_norm_epsilon", 1e-5},            {"multi_query_attention", false},
      {"pad_token", target[c.pad_id]}};
  const std::string tmp = out_dir + ".tmp-" + std::to_string(::getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    io::write_ct2_model_bin(tmp + "/model.bin", ct2_model_bin(m));
    io::write_file_atomic(tmp + "/config.json", ct2_config.dump(2) + "\n");
    if (c.share_embeddings || source == target) {
      io::write_file_atomic(tmp + "/shared_vocabulary.json", nlohmann::json(target).dump() + "\n");
    } else {
      io::write_file_atomic(tmp + "/source_vocabulary.json", nlohmann::json(source).dump() + "\n");
      io::write_file_atomic(tmp + "/target_vocabulary.json", nlohmann::json(target).dump() + "\n");
    }
    // the SentencePiece models under the names ct2-transformers-converter --copy_files gives them
    fs::copy_file(model_dir + "/" + spm_file(config, "source"), tmp + "/source.spm");
    fs::copy_file(model_dir + "/" + spm_file(config, "target"), tmp + "/target.spm");
    fs::rename(tmp, out_dir);
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
}

}  // namespace attn
