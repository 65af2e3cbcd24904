// LibreTranslate's API, so that its clients (browser extensions, desktop tools, scripts) work
// unchanged against attn serve:
//   POST /translate {"q": "..." | [...], "source": "en", "target": "de", "format": "text"}
//     -> {"translatedText": "..." | [...]}
//   GET /languages -> [{"code": "en", "name": "en", "targets": ["de"]}]
// The model is the one whose languages (config.json's "languages", an imported Argos package's, or
// the name SOURCE-TARGET: --model en-de=DIR) are the request's; with a single translation model
// that reads text, that one whatever the languages. Errors are LibreTranslate's {"error": "..."} too.
#include "service.h"

namespace attn::serve {

Outcome Service::libretranslate(const nlohmann::json& body) {
  const std::string source = string_field(body, "source", "auto"), target = string_field(body, "target", "");
  const std::string format = string_field(body, "format", "text");
  if (format != "text") throw HttpError(400, "format '" + format + "' is not supported: only \"text\"");
  if (!body.contains("q")) throw HttpError(400, "Invalid request: missing q parameter");
  std::string name;
  size_t translation_models = 0;
  for (const auto& m : models_) {
    if (m->classifier || !m->tokenizers()) continue;
    ++translation_models;
    if (m->target.code == target && (m->source.code == source || source == "auto") && name.empty()) name = m->name;
  }
  if (name.empty() && translation_models == 1)
    for (const auto& m : models_)
      if (!m->classifier && m->tokenizers()) name = m->name;
  if (name.empty()) throw HttpError(400, source + " -> " + target + " is not available (GET /languages)");
  const Outcome out = translate({{"model", name}, {"text", body["q"]}});
  if (out.status != 200) return out;
  nlohmann::json texts = nlohmann::json::array();
  for (const auto& t : out.json["translations"]) texts.push_back(t["text"]);
  return {200, {{"translatedText", body["q"].is_string() ? texts[0] : texts}}, "", out.hold};
}

nlohmann::json Service::languages() const {
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> targets;  // code -> name, targets
  for (const auto& m : models_) {
    if (m->classifier || m->source.code.empty() || !m->tokenizers()) continue;
    auto& entry = targets[m->source.code];
    entry.first = m->source.name;
    entry.second.push_back(m->target.code);
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [code, entry] : targets) list.push_back({{"code", code}, {"name", entry.first}, {"targets", entry.second}});
  return list;
}

}  // namespace attn::serve
