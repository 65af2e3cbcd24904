#include "attn/models/transformer_config.h"

#include <nlohmann/json.hpp>

#include "attn/enum_names.h"
#include "attn/error.h"
#include "config_fields.h"

namespace attn {

namespace {

const EnumName<ModelKind> kModelKinds[] = {{ModelKind::transformer, "transformer"}, {ModelKind::rnn, "rnn"}};
const EnumName<Positions> kPositions[] = {{Positions::sinusoidal, "sinusoidal"}, {Positions::learned, "learned"}};
const EnumName<Activation> kActivations[] = {{Activation::relu, "relu"}, {Activation::gelu, "gelu"}};

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

void TransformerConfig::validate() const {
  config_fields::validate_shared(*this);
  check(heads > 0 && d_model % heads == 0, "config: d_model ", d_model, " must be a positive multiple of heads ",
        heads);
  config_fields::check_size(d_ff, "d_ff", 1, config_fields::kLimits.inner);
  config_fields::check_fits_in_memory(approximate_parameters(*this), "Transformer");
}

TransformerConfig transformer_config_from_json(const nlohmann::json& j, const std::string& source) {
  using namespace config_fields;
  check(j.is_object(), source, ": the configuration must be a JSON object");
  TransformerConfig c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const nlohmann::json& v = it.value();
    if (read_shared_key(k, v, c, source)) continue;
    if (k == "heads") c.heads = read_int(v, k, source, 1, kLimits.width);
    else if (k == "d_ff" || k == "ff") c.d_ff = read_int(v, k, source, 1, kLimits.inner);
    else if (k == "norm_first") c.norm_first = read_bool(v, k, source);
    else if (k == "positions") parse(read_string(v, k, source), &c.positions, source + ": positions");
    else if (k == "activation") parse(read_string(v, k, source), &c.activation, source + ": activation");
    else if (k == "model") {
      ModelKind kind;
      parse(read_string(v, k, source), &kind, source + ": model");
      check(kind == ModelKind::transformer, source, ": model is '", name(kind),
            "', not a Transformer (load it as a translation model: load_seq2seq)");
    } else if (k == "task" || k == "tokenizer" || k == "training" || k == "precision" || k == "int8_weight_max")
      continue;  // not the network's
    else fail(source, ": unknown key '", k, "'");
  }
  try {
    c.validate();
  } catch (const Error& e) {
    fail(source, ": ", e.what());
  }
  return c;
}

nlohmann::json transformer_config_to_json(const TransformerConfig& c) {
  nlohmann::json j = {{"model", name(ModelKind::transformer)}};
  config_fields::write_shared_keys(c, j);
  j["heads"] = c.heads;
  j["d_ff"] = c.d_ff;
  j["norm_first"] = c.norm_first;
  j["positions"] = name(c.positions);
  j["activation"] = name(c.activation);
  if (c.score != ScoreKind::scaled_dot) j["score"] = score_name(c.score);
  return j;
}

}  // namespace attn
