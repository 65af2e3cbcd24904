#include "attn/models/rnn_config.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "config_fields.h"

namespace attn {

namespace {

// Parameters of the network, roughly: embeddings, gates (4 for an LSTM, 3 for a GRU) over
// [input; hidden] per layer and direction, the read-out and the attention.
double approximate_parameters(const RnnConfig& c) {
  const double d = static_cast<double>(c.d_model), h = static_cast<double>(c.encoder_units());
  const double out = static_cast<double>(c.encoder_out()), gates = c.cell == RnnCell::lstm ? 4 : 3;
  double embed = static_cast<double>(c.src_vocab + (c.share_embeddings ? 0 : c.tgt_vocab)) * d;
  double encoder = static_cast<double>(c.encoder_layers * c.directions()) * gates * h * (std::max(d, out) + h);
  double decoder = static_cast<double>(c.decoder_layers) * gates * d * (d + out + d);
  double generator = c.tie_output ? 0 : static_cast<double>(c.tgt_vocab) * d;
  return embed + encoder + decoder + d * (d + out) * 2 + generator;
}

}  // namespace

void RnnConfig::validate() const {
  config_fields::validate_shared(*this);
  check(encoder_layers == decoder_layers, "config: model rnn needs encoder_layers == decoder_layers (decoder ",
        "layer l starts from encoder layer l's state), got ", encoder_layers, " and ", decoder_layers);
  config_fields::check_size(encoder_hidden, "encoder_hidden", 0, config_fields::kLimits.width);
  check(encoder_hidden > 0 || d_model % directions() == 0, "config: a bidirectional encoder with ",
        "encoder_hidden 0 needs an even d_model, got ", d_model);
  check(encoder_out() == d_model || score == ScoreKind::additive || score == ScoreKind::bilinear, "config: score ",
        score_name(score), " needs the encoder's output (", encoder_out(), ") as wide as d_model (", d_model,
        "); use additive or bilinear, or change encoder_hidden");
  config_fields::check_fits_in_memory(approximate_parameters(*this), "RNN");
}

RnnConfig rnn_config_from_json(const nlohmann::json& j, const std::string& source) {
  using namespace config_fields;
  check(j.is_object(), source, ": the configuration must be a JSON object");
  RnnConfig c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const nlohmann::json& v = it.value();
    if (read_shared_key(k, v, c, source)) continue;
    if (k == "rnn_cell") parse(read_string(v, k, source), &c.cell, source + ": rnn_cell");
    else if (k == "bidirectional") c.bidirectional = read_bool(v, k, source);
    else if (k == "encoder_hidden") c.encoder_hidden = read_int(v, k, source, 0, kLimits.width);
    else if (k == "input_feeding") c.input_feeding = read_bool(v, k, source);
    else if (k == "model") {
      ModelKind kind;
      parse(read_string(v, k, source), &kind, source + ": model");
      check(kind == ModelKind::rnn, source, ": model is '", name(kind), "', not an RNN");
    } else if (k == "task" || k == "tokenizer" || k == "training" || k == "precision" || k == "int8_weight_max")
      continue;  // not the network's
    else fail(source, ": unknown key '", k, "' for model rnn");
  }
  try {
    c.validate();
  } catch (const Error& e) {
    fail(source, ": ", e.what());
  }
  return c;
}

nlohmann::json rnn_config_to_json(const RnnConfig& c) {
  nlohmann::json j = {{"model", name(ModelKind::rnn)}};
  config_fields::write_shared_keys(c, j);
  j["score"] = score_name(c.score);
  j["rnn_cell"] = name(c.cell);
  j["bidirectional"] = c.bidirectional;
  j["encoder_hidden"] = c.encoder_hidden;
  j["input_feeding"] = c.input_feeding;
  return j;
}

}  // namespace attn
