#include "attn/models/transformer_config.h"

#include <nlohmann/json.hpp>

#include "attn/enum_names.h"
#include "attn/error.h"
#include "attn/models/config_keys.h"
#include "config_fields.h"

namespace attn {

namespace {

const EnumName<ModelKind> kModelKinds[] = {{ModelKind::transformer, "transformer"}, {ModelKind::rnn, "rnn"}};
const EnumName<Positions> kPositions[] = {
    {Positions::sinusoidal, "sinusoidal"}, {Positions::learned, "learned"}, {Positions::sinusoidal_halves, "sinusoidal_halves"}};
const EnumName<Activation> kActivations[] = {
    {Activation::relu, "relu"}, {Activation::gelu, "gelu"}, {Activation::swish, "swish"}};

// Parameters of the network (biases and norms aside, which are small): embeddings, per encoder
// layer 4 d^2 + 2 d d_ff, per decoder layer 8 d^2 + 2 d d_ff, positions.
double approximate_parameters(const TransformerConfig& c) {
  const double d = static_cast<double>(c.d_model), ff = static_cast<double>(c.d_ff);
  double embed = static_cast<double>(c.src_vocab + (c.share_embeddings ? 0 : c.tgt_vocab)) * d;
  double out = c.tie_output ? 0 : static_cast<double>(c.tgt_vocab) * d;
  double layers = static_cast<double>(c.encoder_layers) * (4 * d * d + 2 * d * ff) +
                  static_cast<double>(c.decoder_layers) * (8 * d * d + 2 * d * ff);
  return embed + out + layers + static_cast<double>(c.max_len) * d;
}

}  // namespace

const char* name(ModelKind k) { return name_in(kModelKinds, k); }
const char* name(Positions p) { return name_in(kPositions, p); }
const char* name(Activation a) { return name_in(kActivations, a); }
void parse(std::string_view text, ModelKind* out, std::string_view what) { *out = parse_in(kModelKinds, text, what); }
void parse(std::string_view text, Positions* out, std::string_view what) { *out = parse_in(kPositions, text, what); }
void parse(std::string_view text, Activation* out, std::string_view what) { *out = parse_in(kActivations, text, what); }
void parse(std::string_view text, ScoreKind* out, std::string_view what) {
  const EnumName<ScoreKind> kinds[] = {{ScoreKind::scaled_dot, "scaled_dot"}, {ScoreKind::dot, "dot"},
                                       {ScoreKind::additive, "additive"}, {ScoreKind::bilinear, "bilinear"}};
  *out = parse_in(kinds, text, what);
}

namespace {

std::vector<ConfigKey<TransformerConfig>> make_transformer_keys() {
  using C = TransformerConfig;
  const Limits& L = kLimits;
  std::vector<ConfigKey<C>> keys = config_fields::shared_seq2seq_keys<C>();
  keys.push_back({{"heads", "h, attention heads (d_k = d_v = d_model / h)", between(1, L.width)},
                  [](C& c) -> Field { return &c.heads; }});
  keys.push_back({{"d_ff", "inner size of the position-wise FFN", between(1, L.inner)},
                  [](C& c) -> Field { return &c.d_ff; }});
  keys.push_back({{"norm_first", "pre-LN (LayerNorm before each sub-layer) instead of post-LN"},
                  [](C& c) -> Field { return &c.norm_first; }});
  keys.push_back({{"positions", "position encoding", {}, {"sinusoidal", "learned", "sinusoidal_halves"}},
                  [](C& c) -> Field { return &c.positions; }});
  keys.push_back({{"activation", "activation of the FFN", {}, {"relu", "gelu", "swish"}},
                  [](C& c) -> Field { return &c.activation; }});
  keys.push_back({{"final_norm", "a LayerNorm after the encoder's and the decoder's last layer"},
                  [](C& c) -> Field { return &c.final_norm; }});
  keys.push_back({{"scale_embeddings", "embeddings multiplied by sqrt(d_model)"},
                  [](C& c) -> Field { return &c.scale_embeddings; }});
  return keys;
}

}  // namespace

const std::vector<ConfigKey<TransformerConfig>>& transformer_config_keys() {
  static const std::vector<ConfigKey<TransformerConfig>> keys = make_transformer_keys();
  return keys;
}

void TransformerConfig::validate() const {
  TransformerConfig c = *this;
  check_fields(bind(transformer_config_keys(), c), "config");
  config_fields::validate_shared(*this);
  check(d_model % heads == 0, "config: d_model ", d_model, " must be a positive multiple of heads ", heads);
  config_fields::check_fits_in_memory(approximate_parameters(*this), "Transformer");
}

TransformerConfig transformer_config_from_json(const nlohmann::json& j, const std::string& source) {
  config_fields::check_family(j, ModelKind::transformer, source,
                              "a Transformer (load it as a translation model: load_seq2seq)");
  TransformerConfig c;
  nlohmann::json named = j;
  if (named.is_object() && named.contains("ff")) {  // torch_ref.py's name of d_ff
    check(!named.contains("d_ff"), source, ": both 'ff' and 'd_ff' are given");
    named["d_ff"] = named["ff"];
    named.erase("ff");
  }
  config_fields::read_fields(named, bind(transformer_config_keys(), c), config_fields::not_the_networks(), source,
                             "a Transformer (an RNN's keys need \"model\": \"rnn\")");
  try {
    c.validate();
  } catch (const Error& e) {
    fail(source, ": ", e.what());
  }
  return c;
}

nlohmann::json transformer_config_to_json(const TransformerConfig& c) {
  TransformerConfig copy = c;
  nlohmann::json j = fields_json(bind(transformer_config_keys(), copy));
  j["model"] = name(ModelKind::transformer);
  return j;
}

}  // namespace attn
