// The RNN encoder-decoder's parameters: their checkpoint keys (tests/rnn/torch_rnn.py's
// state_dict), shapes, fresh initialisation, and building a model around loaded tensors.
#include <cmath>

#include "attn/error.h"
#include "attn/models/named_tensors.h"
#include "attn/models/rnn_seq2seq.h"
#include "attn/nn/init.h"

namespace attn {
namespace {


void add_rnn(std::vector<ParamSpec>& s, const std::string& prefix, const RnnConfig& c, int64_t layers,
             bool bidirectional, int64_t in, int64_t H) {
  // PyTorch's nn.LSTM / nn.GRU: U(-1/sqrt(H), 1/sqrt(H)) for every weight and bias
  const float bound = 1.0f / std::sqrt(static_cast<float>(H));
  for (const auto& [key, shape] : rnn_parameter_shapes(prefix, c.cell, layers, bidirectional, in, H))
    s.push_back({key, shape, Init::uniform, bound});
}

// The distinct parameters (tied ones appear once, under their first name).
std::vector<ParamSpec> specs(const RnnConfig& c) {
  const int64_t D = c.d_model, enc = c.encoder_out();
  std::vector<ParamSpec> s;
  const float embed_std = 1.0f / std::sqrt(static_cast<float>(c.d_model));  // N(0, d_model^-1)
  s.push_back({"src_embed.weight", {c.src_vocab, D}, Init::normal, embed_std});
  if (!c.share_embeddings) s.push_back({"tgt_embed.weight", {c.tgt_vocab, D}, Init::normal, embed_std});
  add_rnn(s, "encoder", c, c.encoder_layers, c.bidirectional, D, c.encoder_units());
  if (enc != D) {
    s.push_back({"bridge_h.weight", {D, enc}, Init::xavier});
    s.push_back({"bridge_h.bias", {D}, Init::zeros});
    if (c.cell == RnnCell::lstm) {
      s.push_back({"bridge_c.weight", {D, enc}, Init::xavier});
      s.push_back({"bridge_c.bias", {D}, Init::zeros});
    }
  }
  add_rnn(s, "decoder", c, c.decoder_layers, false, c.input_feeding ? D + enc : D, D);
  if (c.score == ScoreKind::bilinear) s.push_back({"attention.W", {D, enc}, Init::xavier});
  if (c.score == ScoreKind::additive) {
    s.push_back({"attention.W", {D, D}, Init::xavier});
    s.push_back({"attention.U.weight", {D, enc}, Init::xavier});
    s.push_back({"attention.U.bias", {D}, Init::zeros});
    s.push_back({"attention.v", {1, D}, Init::xavier});
  }
  s.push_back({"readout.weight", {D, D + enc}, Init::xavier});
  s.push_back({"readout.bias", {D}, Init::zeros});
  if (!c.tie_output) s.push_back({"generator.weight", {c.tgt_vocab, D}, Init::xavier});
  s.push_back({"generator.bias", {c.tgt_vocab}, Init::zeros});
  return s;
}

Var optional(const std::map<std::string, Var>& n, const std::string& key) {
  auto it = n.find(key);
  return it == n.end() ? Var() : it->second;
}

// Fills the model's structs from m.named (aliases already added).
void wire(RnnSeq2Seq& m) {
  const RnnConfig& c = m.config;
  const auto& n = m.named;
  m.src_embed = n.at("src_embed.weight");
  m.tgt_embed = n.at("tgt_embed.weight");
  m.encoder = rnn_from(n, "encoder", c.cell, c.encoder_layers, c.bidirectional);
  m.bridge_h = Linear{optional(n, "bridge_h.weight"), optional(n, "bridge_h.bias")};
  m.bridge_c = Linear{optional(n, "bridge_c.weight"), optional(n, "bridge_c.bias")};
  m.decoder = rnn_from(n, "decoder", c.cell, c.decoder_layers, false);
  m.attention.kind = c.score;
  m.attention.W = optional(n, "attention.W");
  m.attention.U = Linear{optional(n, "attention.U.weight"), optional(n, "attention.U.bias")};
  m.attention.v = optional(n, "attention.v");
  m.readout = Linear{n.at("readout.weight"), n.at("readout.bias")};
  m.generator = Linear{n.at("generator.weight"), n.at("generator.bias")};
}

}  // namespace

std::vector<std::pair<std::string, Var>> RnnSeq2Seq::parameters() const {
  std::vector<std::pair<std::string, Var>> out;
  for (const ParamSpec& s : specs(config)) out.emplace_back(s.key, named.at(s.key));
  return out;
}

int64_t RnnSeq2Seq::encoder_out() const { return config.encoder_out(); }

RnnSeq2Seq make_rnn_seq2seq(const RnnConfig& config, uint64_t seed) {
  config.validate();
  RnnSeq2Seq m;
  m.config = config;
  Rng rng(seed);
  for (const ParamSpec& s : specs(config)) m.named[s.key] = Var(init_parameter(s, rng), true);
  for (const auto& [alias, target] : tied_aliases(config.share_embeddings, config.tie_output)) m.named[alias] = m.named.at(target);
  wire(m);
  return m;
}

RnnSeq2Seq rnn_seq2seq_from_tensors(const RnnConfig& config, std::map<std::string, Tensor> tensors,
                                    const std::string& source) {
  config.validate();
  RnnSeq2Seq m;
  m.config = config;
  std::vector<TensorSpec> wanted;
  for (const ParamSpec& s : specs(config)) wanted.push_back({s.key, s.shape});
  load_named_tensors(wanted, tied_aliases(config.share_embeddings, config.tie_output), std::move(tensors), source, m.named);
  wire(m);
  return m;
}

}  // namespace attn
