#include "attn/models/transformer_config.h"

#include <nlohmann/json.hpp>

#include "attn/enum_names.h"
#include "attn/error.h"

namespace attn {

namespace {

const EnumName<ModelKind> kModelKinds[] = {{ModelKind::transformer, "transformer"}, {ModelKind::rnn, "rnn"}};
const EnumName<Positions> kPositions[] = {{Positions::sinusoidal, "sinusoidal"}, {Positions::learned, "learned"}};
const EnumName<Activation> kActivations[] = {{Activation::relu, "relu"}, {Activation::gelu, "gelu"}};

void validate_rnn(const TransformerConfig& c) {
  check(c.encoder_layers >= 1 && c.encoder_layers == c.decoder_layers, "config: model rnn needs ",
        "encoder_layers == decoder_layers >= 1 (decoder layer l starts from encoder layer l's state), got ",
        c.encoder_layers, " and ", c.decoder_layers);
  check(c.encoder_hidden >= 0, "config: encoder_hidden must be >= 0, got ", c.encoder_hidden);
  int64_t dirs = c.bidirectional ? 2 : 1;
  check(c.encoder_hidden > 0 || c.d_model % dirs == 0, "config: a bidirectional encoder with ",
        "encoder_hidden 0 needs an even d_model, got ", c.d_model);
  int64_t enc_out = dirs * (c.encoder_hidden > 0 ? c.encoder_hidden : c.d_model / dirs);
  check(enc_out == c.d_model || c.score == ScoreKind::additive || c.score == ScoreKind::bilinear, "config: score ",
        score_name(c.score),
        " needs the encoder's output (", enc_out, ") as wide as d_model (", c.d_model,
        "); use additive or bilinear, or change encoder_hidden");
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
  check(src_vocab > 0 && tgt_vocab > 0, "config: vocabularies must be positive (src_vocab ",
        src_vocab, ", tgt_vocab ", tgt_vocab, ")");
  check(d_model > 0 && heads > 0 && d_model % heads == 0, "config: d_model ", d_model,
        " must be a positive multiple of heads ", heads);
  check(encoder_layers >= 0 && decoder_layers > 0, "config: encoder_layers ", encoder_layers,
        " and decoder_layers ", decoder_layers, " must be >= 0 and > 0");
  check(d_ff > 0, "config: d_ff must be positive, got ", d_ff);
  check(dropout >= 0.0f && dropout < 1.0f, "config: dropout must be in [0, 1), got ", dropout);
  check(!share_embeddings || src_vocab == tgt_vocab, "config: share_embeddings needs src_vocab (",
        src_vocab, ") == tgt_vocab (", tgt_vocab, ")");
  check(max_len > 0, "config: max_len must be positive, got ", max_len);
  for (int32_t id : {pad_id, bos_id, eos_id})
    check(id >= 0 && id < tgt_vocab, "config: special id ", id, " out of range for tgt_vocab ", tgt_vocab);
  if (model == ModelKind::rnn) validate_rnn(*this);
}

TransformerConfig transformer_config_from_json(const nlohmann::json& j, const std::string& source) {
  check(j.is_object(), source, ": the configuration must be a JSON object");
  TransformerConfig c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const auto& v = it.value();
    try {
      if (k == "src_vocab") c.src_vocab = v.get<int64_t>();
      else if (k == "tgt_vocab") c.tgt_vocab = v.get<int64_t>();
      else if (k == "d_model") c.d_model = v.get<int64_t>();
      else if (k == "heads") c.heads = v.get<int64_t>();
      else if (k == "encoder_layers") c.encoder_layers = v.get<int64_t>();
      else if (k == "decoder_layers") c.decoder_layers = v.get<int64_t>();
      else if (k == "d_ff" || k == "ff") c.d_ff = v.get<int64_t>();
      else if (k == "dropout") c.dropout = v.get<float>();
      else if (k == "norm_first") c.norm_first = v.get<bool>();
      else if (k == "share_embeddings") c.share_embeddings = v.get<bool>();
      else if (k == "tie_output") c.tie_output = v.get<bool>();
      else if (k == "positions") parse(v.get<std::string>(), &c.positions, source + ": positions");
      else if (k == "activation") parse(v.get<std::string>(), &c.activation, source + ": activation");
      else if (k == "max_len") c.max_len = v.get<int64_t>();
      else if (k == "pad_id") c.pad_id = v.get<int32_t>();
      else if (k == "bos_id") c.bos_id = v.get<int32_t>();
      else if (k == "eos_id") c.eos_id = v.get<int32_t>();
      else if (k == "model") parse(v.get<std::string>(), &c.model, source + ": model");
      else if (k == "score") parse(v.get<std::string>(), &c.score, source + ": score");
      else if (k == "rnn_cell") parse(v.get<std::string>(), &c.rnn_cell, source + ": rnn_cell");
      else if (k == "bidirectional") c.bidirectional = v.get<bool>();
      else if (k == "encoder_hidden") c.encoder_hidden = v.get<int64_t>();
      else if (k == "input_feeding") c.input_feeding = v.get<bool>();
      else if (k == "task" || k == "tokenizer" || k == "training") continue;  // not the network's
      else fail(source, ": unknown key '", k, "'");
    } catch (const nlohmann::json::exception& e) {
      fail(source, ": key '", k, "' has the wrong type (", v.dump(), ")");
    }
  }
  try {
    c.validate();
  } catch (const Error& e) {
    fail(source, ": ", e.what());
  }
  return c;
}

nlohmann::json transformer_config_to_json(const TransformerConfig& c) {
  nlohmann::json j = {{"model", name(c.model)},
          {"src_vocab", c.src_vocab},
          {"tgt_vocab", c.tgt_vocab},
          {"d_model", c.d_model},
          {"heads", c.heads},
          {"encoder_layers", c.encoder_layers},
          {"decoder_layers", c.decoder_layers},
          {"d_ff", c.d_ff},
          {"dropout", c.dropout},
          {"norm_first", c.norm_first},
          {"share_embeddings", c.share_embeddings},
          {"tie_output", c.tie_output},
          {"positions", name(c.positions)},
          {"activation", name(c.activation)},
          {"max_len", c.max_len},
          {"pad_id", c.pad_id},
          {"bos_id", c.bos_id},
          {"eos_id", c.eos_id}};
  if (c.score != ScoreKind::scaled_dot || c.model == ModelKind::rnn) j["score"] = score_name(c.score);
  if (c.model == ModelKind::rnn) {
    j["rnn_cell"] = name(c.rnn_cell);
    j["bidirectional"] = c.bidirectional;
    j["encoder_hidden"] = c.encoder_hidden;
    j["input_feeding"] = c.input_feeding;
  }
  return j;
}

}  // namespace attn
