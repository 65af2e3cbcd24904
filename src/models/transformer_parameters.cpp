// The Transformer's parameters: their checkpoint keys and shapes, fresh initialisation, and
// building a model around loaded tensors.
#include <cmath>

#include "attn/error.h"
#include "attn/models/named_tensors.h"
#include "attn/models/transformer.h"
#include "attn/nn/init.h"
#include "attn/nn/positional_encoding.h"

namespace attn {
namespace {


void add_attention(std::vector<ParamSpec>& s, const std::string& p, int64_t d, const TransformerConfig& c) {
  s.push_back({p + ".in_proj_weight", {3 * d, d}, Init::xavier});
  s.push_back({p + ".in_proj_bias", {3 * d}, Init::zeros});
  s.push_back({p + ".out_proj.weight", {d, d}, Init::xavier});
  s.push_back({p + ".out_proj.bias", {d}, Init::zeros});
  // A score other than scaled_dot (nn/attention_score.h), shared by the heads: [d_k, d_k] maps.
  const int64_t dk = c.d_k();
  if (c.score == ScoreKind::bilinear || c.score == ScoreKind::additive) s.push_back({p + ".score.W", {dk, dk}, Init::xavier});
  if (c.score == ScoreKind::additive) {
    s.push_back({p + ".score.U.weight", {dk, dk}, Init::xavier});
    s.push_back({p + ".score.U.bias", {dk}, Init::zeros});
    s.push_back({p + ".score.v", {1, dk}, Init::xavier});
  }
}

void add_norm(std::vector<ParamSpec>& s, const std::string& p, int64_t d) {
  s.push_back({p + ".weight", {d}, Init::ones});
  s.push_back({p + ".bias", {d}, Init::zeros});
}

void add_ffn(std::vector<ParamSpec>& s, const std::string& p, int64_t d, int64_t ff) {
  s.push_back({p + "linear1.weight", {ff, d}, Init::xavier});
  s.push_back({p + "linear1.bias", {ff}, Init::zeros});
  s.push_back({p + "linear2.weight", {d, ff}, Init::xavier});
  s.push_back({p + "linear2.bias", {d}, Init::zeros});
}

// The distinct parameters (tied ones appear once, under their first name).
std::vector<ParamSpec> specs(const TransformerConfig& c) {
  int64_t d = c.d_model;
  std::vector<ParamSpec> s;
  // Embeddings: N(0, d_model^-1), so that embedding * sqrt(d_model) has unit variance.
  const float embed_std = 1.0f / std::sqrt(static_cast<float>(d));
  s.push_back({"src_embed.weight", {c.src_vocab, d}, Init::normal, embed_std});
  if (!c.share_embeddings) s.push_back({"tgt_embed.weight", {c.tgt_vocab, d}, Init::normal, embed_std});
  if (c.positions == Positions::learned) s.push_back({"pos_embed.weight", {c.max_len, d}, Init::normal, embed_std});
  for (int64_t i = 0; i < c.encoder_layers; ++i) {
    std::string p = "transformer.encoder.layers." + std::to_string(i) + ".";
    add_attention(s, p + "self_attn", d, c);
    add_ffn(s, p, d, c.d_ff);
    add_norm(s, p + "norm1", d);
    add_norm(s, p + "norm2", d);
  }
  if (c.final_norm) add_norm(s, "transformer.encoder.norm", d);
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    std::string p = "transformer.decoder.layers." + std::to_string(i) + ".";
    add_attention(s, p + "self_attn", d, c);
    add_attention(s, p + "multihead_attn", d, c);
    add_ffn(s, p, d, c.d_ff);
    add_norm(s, p + "norm1", d);
    add_norm(s, p + "norm2", d);
    add_norm(s, p + "norm3", d);
  }
  if (c.final_norm) add_norm(s, "transformer.decoder.norm", d);
  if (!c.tie_output) s.push_back({"generator.weight", {c.tgt_vocab, d}, Init::xavier});
  s.push_back({"generator.bias", {c.tgt_vocab}, Init::zeros});
  return s;
}

MultiHeadAttention attention_at(std::map<std::string, Var>& n, const std::string& p, int64_t heads,
                                ScoreKind score) {
  MultiHeadAttention a{heads, n.at(p + ".in_proj_weight"), n.at(p + ".in_proj_bias"),
                       Linear{n.at(p + ".out_proj.weight"), n.at(p + ".out_proj.bias")}, {}};
  a.score.kind = score;
  auto optional = [&](const std::string& k) { return n.count(p + k) ? n.at(p + k) : Var(); };
  a.score.W = optional(".score.W");
  a.score.U = Linear{optional(".score.U.weight"), optional(".score.U.bias")};
  a.score.v = optional(".score.v");
  return a;
}
LayerNorm norm_at(std::map<std::string, Var>& n, const std::string& p) {
  return {n.at(p + ".weight"), n.at(p + ".bias")};
}
FeedForward ffn_at(std::map<std::string, Var>& n, const std::string& p, Activation activation) {
  return {Linear{n.at(p + "linear1.weight"), n.at(p + "linear1.bias")},
          Linear{n.at(p + "linear2.weight"), n.at(p + "linear2.bias")}, activation};
}

// Fills the model's structs from m.named (aliases already added).
void wire(Transformer& m) {
  const TransformerConfig& c = m.config;
  auto& n = m.named;
  m.src_embed = n.at("src_embed.weight");
  m.tgt_embed = n.at("tgt_embed.weight");
  if (c.positions == Positions::learned) m.pos_embed = n.at("pos_embed.weight");
  else m.pe = sinusoid_table(c.max_len, c.d_model, c.positions == Positions::sinusoidal_halves);
  for (int64_t i = 0; i < c.encoder_layers; ++i) {
    std::string p = "transformer.encoder.layers." + std::to_string(i) + ".";
    m.encoder.push_back({attention_at(n, p + "self_attn", c.heads, c.score), ffn_at(n, p, c.activation),
                         norm_at(n, p + "norm1"), norm_at(n, p + "norm2")});
  }
  if (c.final_norm) m.encoder_norm = norm_at(n, "transformer.encoder.norm");
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    std::string p = "transformer.decoder.layers." + std::to_string(i) + ".";
    m.decoder.push_back({attention_at(n, p + "self_attn", c.heads, c.score),
                         attention_at(n, p + "multihead_attn", c.heads, c.score),
                         ffn_at(n, p, c.activation), norm_at(n, p + "norm1"), norm_at(n, p + "norm2"),
                         norm_at(n, p + "norm3")});
  }
  if (c.final_norm) m.decoder_norm = norm_at(n, "transformer.decoder.norm");
  m.generator = Linear{n.at("generator.weight"), n.at("generator.bias")};
}

}  // namespace

Transformer make_transformer(const TransformerConfig& config, uint64_t seed) {
  config.validate();
  Transformer m;
  m.config = config;
  Rng rng(seed);
  for (const ParamSpec& s : specs(config)) m.named[s.key] = Var(init_parameter(s, rng), true);
  for (const auto& [alias, target] : tied_aliases(config.share_embeddings, config.tie_output)) m.named[alias] = m.named.at(target);
  wire(m);
  return m;
}

Transformer transformer_from_tensors(const TransformerConfig& config, std::map<std::string, Tensor> tensors,
                                     const std::string& source) {
  config.validate();
  Transformer m;
  m.config = config;
  std::vector<TensorSpec> wanted;
  for (const ParamSpec& s : specs(config)) wanted.push_back({s.key, s.shape});
  load_named_tensors(wanted, tied_aliases(config.share_embeddings, config.tie_output), std::move(tensors), source, m.named);
  wire(m);
  return m;
}

}  // namespace attn
