#include "attn/models/rnn_config.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/models/config_keys.h"
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

std::vector<ConfigKey<RnnConfig>> make_rnn_keys() {
  using C = RnnConfig;
  std::vector<ConfigKey<C>> keys = config_fields::shared_seq2seq_keys<C>();
  keys.push_back({{"rnn_cell", "rnn: the recurrent cell", {}, {"lstm", "gru"}}, [](C& c) -> Field { return &c.cell; }});
  keys.push_back({{"bidirectional", "rnn: bidirectional encoder"}, [](C& c) -> Field { return &c.bidirectional; }});
  keys.push_back({{"encoder_hidden", "rnn: units per encoder direction (0: d_model / directions)",
                   between(0, kLimits.width)}, [](C& c) -> Field { return &c.encoder_hidden; }});
  keys.push_back({{"input_feeding", "rnn: the attention context c_t is part of the decoder's input"},
                  [](C& c) -> Field { return &c.input_feeding; }});
  return keys;
}

}  // namespace

const std::vector<ConfigKey<RnnConfig>>& rnn_config_keys() {
  static const std::vector<ConfigKey<RnnConfig>> keys = make_rnn_keys();
  return keys;
}

void RnnConfig::validate() const {
  RnnConfig c = *this;
  check_fields(bind(rnn_config_keys(), c), "config");
  config_fields::validate_shared(*this);
  check(encoder_layers == decoder_layers, "config: model rnn needs encoder_layers == decoder_layers (decoder ",
        "layer l starts from encoder layer l's state), got ", encoder_layers, " and ", decoder_layers);
  check(encoder_hidden > 0 || d_model % directions() == 0, "config: a bidirectional encoder with ",
        "encoder_hidden 0 needs an even d_model, got ", d_model);
  check(encoder_out() == d_model || score == ScoreKind::additive || score == ScoreKind::bilinear, "config: score ",
        score_name(score), " needs the encoder's output (", encoder_out(), ") as wide as d_model (", d_model,
        "); use additive or bilinear, or change encoder_hidden");
  config_fields::check_fits_in_memory(approximate_parameters(*this), "RNN");
}

RnnConfig rnn_config_from_json(const nlohmann::json& j, const std::string& source) {
  config_fields::check_family(j, ModelKind::rnn, source, "an RNN");
  RnnConfig c;
  config_fields::read_fields(j, bind(rnn_config_keys(), c), config_fields::not_the_networks(), source, "model rnn");
  try {
    c.validate();
  } catch (const Error& e) {
    fail(source, ": ", e.what());
  }
  return c;
}

nlohmann::json rnn_config_to_json(const RnnConfig& c) {
  RnnConfig copy = c;
  nlohmann::json j = fields_json(bind(rnn_config_keys(), copy));
  j["model"] = name(ModelKind::rnn);
  return j;
}

}  // namespace attn
