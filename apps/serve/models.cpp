#include "models.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/models/model_dir.h"

namespace attn::serve {

ModelSpec parse_model_spec(const std::string& text) {
  const size_t eq = text.find('=');
  check(eq != std::string::npos && eq > 0 && eq + 1 < text.size(), "--model needs NAME=DIR[:PRECISION], got '",
        text, "'");
  ModelSpec s{text.substr(0, eq), text.substr(eq + 1), ""};
  for (char c : s.name)
    check(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.', "--model '", text,
          "': a model's name is letters, digits, '-', '_' and '.'");
  const size_t colon = s.dir.rfind(':');
  if (colon != std::string::npos) {
    const std::string p = s.dir.substr(colon + 1);
    if (p == "fp32" || p == "bf16" || p == "int8") {
      s.precision = p;
      s.dir.resize(colon);
    }
  }
  return s;
}

std::string ServedModel::kind() const {
  if (classifier) return "classifier";
  return seq2seq().kind() == ModelKind::rnn ? "rnn" : "transformer";
}

nlohmann::json ServedModel::describe() const {
  nlohmann::json j = {{"name", name}, {"kind", kind()}, {"precision", precision_name(precision)}};
  if (classifier) {
    j["task"] = "classification";
    j["labels"] = classifier->labels;
    return j;
  }
  const Seq2SeqCommon c = seq2seq().common();
  j["task"] = "translation";
  j["input"] = tokenizers() ? "text" : "ids";  // a model without a tokenizer takes "ids" only
  j["max_len"] = c.max_len;
  j["src_vocab"] = c.src_vocab;
  j["tgt_vocab"] = c.tgt_vocab;
  return j;
}

namespace {

void set_languages(ServedModel& m, const nlohmann::json& config) {
  const std::string where = m.dir + "/config.json: \"languages\"";
  if (config.contains("languages")) {
    const nlohmann::json& l = config["languages"];
    for (auto [key, side] : {std::pair{"source", &m.source}, std::pair{"target", &m.target}}) {
      check(l.is_object() && l.contains(key) && l[key].is_object() && l[key].contains("code") && l[key]["code"].is_string(),
            where, " needs {\"source\": {\"code\": ..., \"name\": ...}, \"target\": {...}}");
      side->code = l[key]["code"].get<std::string>();
      side->name = l[key].value("name", "");
      if (side->name.empty()) side->name = side->code;
    }
    return;
  }
  const size_t dash = m.name.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == m.name.size() || m.name.find('-', dash + 1) != std::string::npos)
    return;
  m.source = {m.name.substr(0, dash), m.name.substr(0, dash)};
  m.target = {m.name.substr(dash + 1), m.name.substr(dash + 1)};
}

}  // namespace

std::unique_ptr<ServedModel> load_served_model(const ModelSpec& spec) {
  auto m = std::make_unique<ServedModel>();
  m->name = spec.name;
  m->dir = spec.dir;
  m->precision = model_precision(spec.precision.empty() ? std::nullopt : std::optional<Precision>(parse_precision(spec.precision, "--model")), spec.dir);
  const nlohmann::json config = read_json_file(spec.dir + "/config.json");
  if (config.value("task", "") == "classification") {
    m->classifier.emplace(load_classifier(spec.dir));
    prepare(m->classifier->model, m->precision, Use::inference);  // weights converted once
    return m;
  }
  set_languages(*m, config);
  TranslatorOptions o;
  o.models = {spec.dir};
  o.precision = m->precision;
  m->translator.emplace(o);
  if (const Tokenizers tok = m->tokenizers())
    for (const data::Tokenizer* side : {tok.source.get(), tok.target.get()})
      for (int32_t id = 0; id < side->vocab_size(); ++id)
        m->token_json_bytes = std::max(m->token_json_bytes, nlohmann::json(side->piece(id)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size());
  return m;
}

void load_served_shortlist(const std::string& text, const std::vector<std::unique_ptr<ServedModel>>& models) {
  const size_t eq = text.find('=');
  check(eq != std::string::npos && eq > 0 && eq + 1 < text.size(), "--shortlist needs NAME=FILE, got '", text, "'");
  const std::string name = text.substr(0, eq), file = text.substr(eq + 1);
  for (const auto& m : models) {
    if (m->name != name) continue;
    check(m->translator.has_value(), "--shortlist '", text, "': model '", name, "' is a classifier");
    check(m->translator->shortlist() == nullptr, "--shortlist: model '", name, "' is given two");
    m->translator->load_shortlist(file);
    return;
  }
  fail("--shortlist '", text, "': no --model is named '", name, "'");
}

}  // namespace attn::serve
