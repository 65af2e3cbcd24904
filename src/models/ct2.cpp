#include "attn/models/ct2.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>

#include "attn/data/piece_vocabulary.h"
#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "hf_json.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// The padding id's output bias: finite (attn loads finite weights only), and so far below any
// logit that exp() of it is 0 in float32, so that softmax over V + 1 ids is softmax over V.
constexpr float kNeverLogit = -1e30f;
using io::Ct2DType;
using io::Ct2ModelBin;
using io::Ct2Variable;

const Ct2Variable& need(const Ct2ModelBin& m, const std::string& name) {
  const Ct2Variable* v = m.find(name);
  check(v != nullptr, m.source, ": no variable \"", name, "\"");
  return *v;
}

double scalar_or(const Ct2ModelBin& m, const std::string& name, double fallback) {
  const Ct2Variable* v = m.find(name);
  return v ? io::ct2_scalar_value(*v, name, m.source) : fallback;
}

// The encoder's and the decoder's value of a scalar both stacks have; they must agree.
double both(const Ct2ModelBin& m, const std::string& key, double fallback) {
  const double e = scalar_or(m, "encoder/" + key, fallback), d = scalar_or(m, "decoder/" + key, fallback);
  check(e == d, m.source, ": \"encoder/", key, "\" is ", e, " and \"decoder/", key, "\" ", d,
        "; attn's encoder and decoder share it");
  return e;
}

// A weight in float32: an int8 one is q / scale per row (weight_scale [rows]), an int16 one q /
// scale (one scalar), as CTranslate2 dequantizes (models/model.cc).
Tensor weight(const Ct2ModelBin& m, const std::string& name) {
  const Ct2Variable& v = need(m, name);
  Tensor w = io::ct2_to_float(v);
  check(m.find(name + "_zero") == nullptr, m.source, ": \"", name, "_zero\": attn reads symmetric quantization only");
  if (v.dtype != Ct2DType::i8 && v.dtype != Ct2DType::i16) return w;
  const Tensor scale = io::ct2_to_float(need(m, name + "_scale"));
  const int64_t rows = w.size(0), cols = w.numel() / rows;
  check(scale.numel() == 1 || scale.numel() == rows, m.source, ": \"", name, "_scale\" has ", scale.numel(),
        " values for ", rows, " rows");
  float* p = w.data<float>();
  const float* s = scale.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) p[r * cols + c] /= s[scale.numel() == 1 ? 0 : r];
  return w;
}

Tensor bias_or_zeros(const Ct2ModelBin& m, const std::string& name, int64_t n) {
  return m.find(name) ? weight(m, name) : Tensor::zeros({n});
}

// rows of a then b: [ra + rb, ...]
Tensor stack(const Tensor& a, const Tensor& b) {
  Shape shape = a.shape();
  shape[0] += b.size(0);
  Tensor out = Tensor::empty(shape);
  std::memcpy(out.data<float>(), a.data<float>(), a.nbytes());
  std::memcpy(out.data<float>() + a.numel(), b.data<float>(), b.nbytes());
  return out;
}

// The table with one more row: zeros (the padding id's embedding), or `last` everywhere.
Tensor with_row(const Tensor& t, float last) {
  Shape shape = t.shape();
  shape[0] += 1;
  Tensor out = Tensor::full(shape, last);
  std::memcpy(out.data<float>(), t.data<float>(), t.nbytes());
  return out;
}

bool same_values(const Ct2ModelBin& m, const std::string& a, const std::string& b) {
  const Ct2Variable *x = m.find(a), *y = m.find(b);
  return x && y && (x == y || (x->shape == y->shape && x->dtype == y->dtype && x->bytes == y->bytes));
}

int64_t count_layers(const Ct2ModelBin& m, const std::string& stack) {
  std::set<int64_t> seen;
  const std::regex layer("^" + stack + "/layer_([0-9]+)/");
  auto look = [&](const std::string& name) {
    std::smatch match;
    if (std::regex_search(name, match, layer)) seen.insert(std::stoll(match[1]));
  };
  for (const auto& [name, v] : m.variables) look(name);
  for (const auto& [alias, target] : m.aliases) look(alias);
  const int64_t n = static_cast<int64_t>(seen.size());
  check(n > 0, m.source, ": no \"", stack, "/layer_N/...\" variable (a ", stack, " without layers)");
  check(*seen.rbegin() == n - 1, m.source, ": the ", stack, " layers are not layer_0 .. layer_", n - 1);
  return n;
}

// The encoder's embeddings: "encoder/embeddings" (one input), or "encoder/embeddings_0" of a
// spec with source features, which attn reads only when there is one.
std::string source_embeddings(const Ct2ModelBin& m) {
  check(!m.find("encoder/embeddings_1/weight"), m.source, ": \"encoder/embeddings_1\": a model with source features ",
        "(several inputs a token) is not one attn reads");
  return m.find("encoder/embeddings_0/weight") ? "encoder/embeddings_0/weight" : "encoder/embeddings/weight";
}

// Spec options attn does not compute, refused by name when set.
void refuse_unsupported(const Ct2ModelBin& m, const nlohmann::json& config, const std::string& config_path) {
  for (const char* key : {"encoder/alibi", "decoder/alibi", "encoder/multi_query_attention",
                          "decoder/multi_query_attention", "decoder/parallel_residual", "decoder/shared_layer_norm"})
    check(scalar_or(m, key, 0) == 0, m.source, ": \"", key, "\" is set; attn's Transformer has no such attention");
  for (const auto& [name, v] : m.variables) {
    for (const char* part : {"/relative_position", "/rotary", "layernorm_embedding", "/num_heads_kv", "/lora"})
      check(name.find(part) == std::string::npos, m.source, ": variable \"", name, "\" (", part + 1,
            ") is not part of a Transformer attn reads");
  }
  const double eps = detail::hf_value(config, "layer_norm_epsilon", 1e-5, config_path, "a CTranslate2 config");
  check(std::abs(eps - 1e-5) < 1e-12, config_path, ": \"layer_norm_epsilon\" is ", eps, "; attn's layer norms use 1e-5");
}

Activation activation_of(double id, const std::string& source) {
  // specs/common_spec.py: Activation
  switch (static_cast<int>(id)) {
    case 0: return Activation::relu;
    case 2: return Activation::swish;
    case 3: return Activation::gelu;
  }
  fail(source, ": \"encoder/activation\" is ", id, " (", id == 1 ? "GELU tanh" : id == 4 ? "GELU sigmoid" : "unknown",
       "); attn has 0 ReLU, 2 swish, 3 GELU");
}

}  // namespace

bool is_ct2_dir(const std::string& dir) {
  return fs::is_directory(dir) && fs::exists(dir + "/model.bin");
}

TransformerConfig ct2_config(const Ct2ModelBin& m, const nlohmann::json& config, const std::string& dir, int32_t pad) {
  const std::string config_path = dir + "/config.json";
  check(m.spec == "TransformerSpec", m.source, ": spec \"", m.spec, "\"; attn reads TransformerSpec (encoder-decoder)");
  refuse_unsupported(m, config, config_path);
  TransformerConfig c;
  const Ct2Variable& src_embed = need(m, source_embeddings(m));
  const Ct2Variable& tgt_embed = need(m, "decoder/embeddings/weight");
  check(src_embed.shape.size() == 2 && tgt_embed.shape.size() == 2, m.source, ": embeddings are not [vocabulary, d]");
  c.d_model = src_embed.shape[1];
  const int64_t added = pad < 0 ? 1 : 0;  // + the padding id (models/ct2.h), unless it has one
  c.src_vocab = src_embed.shape[0] + added;
  c.tgt_vocab = tgt_embed.shape[0] + added;
  c.encoder_layers = count_layers(m, "encoder");
  c.decoder_layers = count_layers(m, "decoder");
  c.heads = static_cast<int64_t>(both(m, "num_heads", 8));
  c.d_ff = need(m, "encoder/layer_0/ffn/linear_0/weight").shape[0];
  c.norm_first = both(m, "pre_norm", 1) != 0;
  c.activation = activation_of(both(m, "activation", 0), m.source);
  const bool enc_norm = m.find("encoder/layer_norm/gamma") != nullptr, dec_norm = m.find("decoder/layer_norm/gamma") != nullptr;
  check(enc_norm == dec_norm, m.source, ": a final layer_norm in one stack only; attn has both or neither");
  c.final_norm = enc_norm;
  // scale_embeddings: a float (the factor), or a bool (sqrt(d_model) when true); absent = true
  const double scale = both(m, "scale_embeddings", 1.0);
  const Ct2Variable* scale_var = m.find("encoder/scale_embeddings");
  const bool as_bool = !scale_var || scale_var->dtype == Ct2DType::i8;
  const double root = std::sqrt(static_cast<double>(c.d_model));
  if (as_bool) c.scale_embeddings = !scale_var || scale != 0;
  else if (std::abs(scale - root) <= 1e-5 * root) c.scale_embeddings = true;
  else if (scale == 1.0) c.scale_embeddings = false;
  else fail(m.source, ": \"encoder/scale_embeddings\" is ", scale, "; attn scales embeddings by sqrt(d_model) = ", root, " or not at all");
  // positions: a stored table (Marian's), else CTranslate2's computed one (ct2_sinusoid), both as
  // attn's table of learned positions
  c.positions = Positions::learned;
  if (m.find("encoder/position_encodings/encodings") || m.find("decoder/position_encodings/encodings")) {
    check(same_values(m, "encoder/position_encodings/encodings", "decoder/position_encodings/encodings"), m.source,
          ": the encoder's and the decoder's position_encodings differ (or one is missing); attn has one table");
    c.max_len = need(m, "decoder/position_encodings/encodings").shape[0];
  } else {
    c.max_len = 1024;
  }
  c.share_embeddings = c.src_vocab == c.tgt_vocab && same_values(m, source_embeddings(m), "decoder/embeddings/weight");
  c.tie_output = same_values(m, "decoder/projection/weight", "decoder/embeddings/weight");
  c.dropout = 0;
  // the padding id is the one added last (models/ct2.h), or the vocabulary's; eos and the start
  // token are import_ct2's
  c.pad_id = pad < 0 ? static_cast<int32_t>(c.tgt_vocab - 1) : pad;
  try {
    c.validate();
  } catch (const Error& e) {
    fail(m.source, ": ", e.what());
  }
  return c;
}

namespace {

// CTranslate2's SinusoidalPositionEncoder (layers/common.cc, OpenNMT-tf's): row t is position
// t + 1, timescales exp(-i log(10000) / (d/2 - 1)), every sin in the first half and every cos in
// the second, computed in float32 as it computes them.
Tensor ct2_sinusoid(int64_t rows, int64_t d) {
  const int64_t half = d / 2;
  const float increment = std::log(10000.f) / static_cast<float>(half - 1);
  std::vector<float> timescales(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) timescales[i] = std::exp(-increment * static_cast<float>(i));
  Tensor t = Tensor::empty({rows, d});
  float* p = t.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < half; ++i) {
      const float x = static_cast<float>(r + 1) * timescales[i];
      p[r * d + i] = std::sin(x);
      p[r * d + half + i] = std::cos(x);
    }
  return t;
}

// attn's tensors (models/transformer.h's names) from the spec's variables.
// `add_pad`: the padding id is added (a zero embedding row, a -1e30 output bias).
std::map<std::string, Tensor> ct2_tensors(const Ct2ModelBin& m, const TransformerConfig& c, bool add_pad) {
  std::map<std::string, Tensor> out;
  const int64_t d = c.d_model;
  auto vocabulary_rows = [&](Tensor t, float last) { return add_pad ? with_row(t, last) : t; };
  out["src_embed.weight"] = vocabulary_rows(weight(m, source_embeddings(m)), 0.0f);
  if (!c.share_embeddings) out["tgt_embed.weight"] = vocabulary_rows(weight(m, "decoder/embeddings/weight"), 0.0f);
  out["pos_embed.weight"] = m.find("decoder/position_encodings/encodings")
                                ? weight(m, "decoder/position_encodings/encodings")
                                : ct2_sinusoid(c.max_len, d);
  if (!c.tie_output) out["generator.weight"] = vocabulary_rows(weight(m, "decoder/projection/weight"), 0.0f);
  // an added padding id is never an output: its logit is -1e30 (models/ct2.h)
  out["generator.bias"] = vocabulary_rows(bias_or_zeros(m, "decoder/projection/bias", c.tgt_vocab - (add_pad ? 1 : 0)),
                                          kNeverLogit);
  auto linear = [&](const std::string& from, const std::string& to, int64_t rows) {
    out[to + "weight"] = weight(m, from + "/weight");
    out[to + "bias"] = bias_or_zeros(m, from + "/bias", rows);
  };
  auto norm = [&](const std::string& from, const std::string& to) {
    out[to + ".weight"] = weight(m, from + "/gamma");
    out[to + ".bias"] = weight(m, from + "/beta");
  };
  for (int64_t i = 0; i < c.encoder_layers; ++i) {
    const std::string s = "encoder/layer_" + std::to_string(i), a = "transformer.encoder.layers." + std::to_string(i) + ".";
    linear(s + "/self_attention/linear_0", a + "self_attn.in_proj_", 3 * d);
    linear(s + "/self_attention/linear_1", a + "self_attn.out_proj.", d);
    norm(s + "/self_attention/layer_norm", a + "norm1");
    linear(s + "/ffn/linear_0", a + "linear1.", c.d_ff);
    linear(s + "/ffn/linear_1", a + "linear2.", d);
    norm(s + "/ffn/layer_norm", a + "norm2");
  }
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    const std::string s = "decoder/layer_" + std::to_string(i), a = "transformer.decoder.layers." + std::to_string(i) + ".";
    linear(s + "/self_attention/linear_0", a + "self_attn.in_proj_", 3 * d);
    linear(s + "/self_attention/linear_1", a + "self_attn.out_proj.", d);
    norm(s + "/self_attention/layer_norm", a + "norm1");
    // cross-attention: q (linear_0) and the fused k, v (linear_1) stacked as attn's in_proj
    out[a + "multihead_attn.in_proj_weight"] = stack(weight(m, s + "/attention/linear_0/weight"),
                                                     weight(m, s + "/attention/linear_1/weight"));
    out[a + "multihead_attn.in_proj_bias"] = stack(bias_or_zeros(m, s + "/attention/linear_0/bias", d),
                                                   bias_or_zeros(m, s + "/attention/linear_1/bias", 2 * d));
    linear(s + "/attention/linear_2", a + "multihead_attn.out_proj.", d);
    norm(s + "/attention/layer_norm", a + "norm2");
    linear(s + "/ffn/linear_0", a + "linear1.", c.d_ff);
    linear(s + "/ffn/linear_1", a + "linear2.", d);
    norm(s + "/ffn/layer_norm", a + "norm3");
  }
  if (c.final_norm) {
    norm("encoder/layer_norm", "transformer.encoder.norm");
    norm("decoder/layer_norm", "transformer.decoder.norm");
  }
  return out;
}

std::string first_existing(const std::string& dir, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (fs::exists(dir + "/" + n)) return n;
  return "";
}

std::string token_setting(const nlohmann::json& config, const char* key, const char* fallback, const std::string& path) {
  return detail::hf_value<std::string>(config, key, fallback, path, "a CTranslate2 config");
}

}  // namespace

Ct2Model import_ct2(const std::string& dir, const std::string& sentencepiece) {
  const std::string config_path = dir + "/config.json";
  // CTranslate2 before 3.0 wrote no config.json: its defaults then (eos "</s>", start "<s>")
  const nlohmann::json config = fs::exists(config_path) ? read_json_file(config_path) : nlohmann::json::object();
  check(config.is_object(), config_path, ": not a JSON object");
  const Ct2ModelBin bin = io::read_ct2_model_bin(dir + "/model.bin");
  // the vocabularies (models/sequence_to_sequence.cc): shared_vocabulary, else source and target
  const std::string shared = first_existing(dir, {"shared_vocabulary.json", "shared_vocabulary.txt"});
  const std::string src_vocab =
      shared.empty() ? first_existing(dir, {"source_vocabulary.json", "source_vocabulary.txt", "source_1_vocabulary.json",
                                            "source_1_vocabulary.txt"}) : shared;
  const std::string tgt_vocab = shared.empty() ? first_existing(dir, {"target_vocabulary.json", "target_vocabulary.txt"}) : shared;
  check(!src_vocab.empty() && !tgt_vocab.empty(), dir, ": no shared_vocabulary.json nor source_vocabulary.json and ",
        "target_vocabulary.json (.txt) beside model.bin");
  const data::PieceVocabulary source = data::read_piece_vocabulary(dir + "/" + src_vocab);
  const data::PieceVocabulary target = data::read_piece_vocabulary(dir + "/" + tgt_vocab);
  // attn export's "pad_token": the vocabulary's own padding id (one id of both vocabularies), so
  // that a model attn exported comes back with the same tensors
  int32_t pad = -1;
  if (config.contains("pad_token")) {
    const std::string token = token_setting(config, "pad_token", "", config_path);
    pad = target.find(token);
    check(pad >= 0 && source.find(token) == pad, config_path, ": \"pad_token\" \"", token, "\" is not one id of ",
          src_vocab, " and ", tgt_vocab);
    check(scalar_or(bin, "decoder/start_from_zero_embedding", 0) == 0, config_path, ": \"pad_token\" with ",
          "start_from_zero_embedding, which attn computes with a padding id of its own");
  }
  TransformerConfig c = ct2_config(bin, config, dir, pad);
  const int64_t added = pad < 0 ? 1 : 0;
  check(source.size() == c.src_vocab - added, dir, "/", src_vocab, ": ", source.size(), " tokens, but model.bin's ",
        "encoder embeddings have ", c.src_vocab - added, " rows");
  check(target.size() == c.tgt_vocab - added, dir, "/", tgt_vocab, ": ", target.size(), " tokens, but model.bin's ",
        "decoder embeddings have ", c.tgt_vocab - added, " rows");
  const std::string eos = token_setting(config, "eos_token", "</s>", config_path);
  const std::string unk = token_setting(config, "unk_token", "<unk>", config_path);
  const std::string bos = token_setting(config, "bos_token", "<s>", config_path);
  const std::string start = token_setting(config, "decoder_start_token", bos.c_str(), config_path);
  c.eos_id = target.find(eos);
  check(c.eos_id >= 0, config_path, ": \"eos_token\" \"", eos, "\" is not in ", tgt_vocab);
  if (scalar_or(bin, "decoder/start_from_zero_embedding", 0) != 0) {
    c.bos_id = c.pad_id;  // the padding id's embedding is the zero vector the spec starts from
  } else {
    c.bos_id = target.find(start);
    check(c.bos_id >= 0, config_path, ": \"decoder_start_token\" \"", start, "\" is not in ", tgt_vocab);
  }
  check(!detail::hf_value(config, "add_source_bos", false, config_path, "a CTranslate2 config"), config_path,
        ": \"add_source_bos\" is true; attn's sources end with eos and start with no bos");
  Ct2Model out;
  out.model = transformer_from_tensors(c, ct2_tensors(bin, c, pad < 0), bin.source);
  // CTranslate2's translate_batch defaults (docs/notes/ct2-rules.md)
  out.translate_defaults = {{"search_rules", "ctranslate2"},   {"beam_size", 2},
                            {"length_penalty", 1.0},          {"min_decoding_length", 1}, {"renormalize_logits", true},
                            {"eos_at_max_len", false},        {"max_decoding_length", std::min<int64_t>(256, c.max_len)}};
  // the tokenizer: SentencePiece's pieces looked up in CTranslate2's vocabularies
  std::string src_spm = sentencepiece, tgt_spm = sentencepiece;
  if (sentencepiece.empty() && fs::exists(dir + "/source.spm") && fs::exists(dir + "/target.spm"))
    src_spm = dir + "/source.spm", tgt_spm = dir + "/target.spm";
  if (src_spm.empty()) return out;
  std::vector<std::string> specials;
  for (const std::string& s : {eos, unk, bos, start})
    if (target.find(s) >= 0 && std::find(specials.begin(), specials.end(), s) == specials.end()) specials.push_back(s);
  bool codes = false;
  for (const std::string& p : target.pieces) codes = codes || (p.size() > 4 && p.rfind(">>", 0) == 0 && p.substr(p.size() - 2) == "<<");
  const std::string src_name = fs::path(src_spm).filename(), tgt_name = fs::path(tgt_spm).filename();
  out.tokenizer = {{"source", {{"sentencepiece", src_name}, {"vocabulary", src_vocab}}},
                   {"target", {{"sentencepiece", tgt_name}, {"vocabulary", tgt_vocab}}},
                   {"specials", specials}, {"unk", unk}, {"language_codes", codes}, {"clean_up_spaces", false}};
  out.files = {{src_spm, src_name}, {dir + "/" + src_vocab, src_vocab}};
  if (tgt_spm != src_spm) out.files.push_back({tgt_spm, tgt_name});
  if (tgt_vocab != src_vocab) out.files.push_back({dir + "/" + tgt_vocab, tgt_vocab});
  return out;
}

}  // namespace attn
