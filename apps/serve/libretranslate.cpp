// LibreTranslate's API, so that its clients (browser extensions, desktop tools, scripts) work
// unchanged against attn serve:
//   POST /translate {"q": "..." | [...], "source": "en", "target": "de", "format": "text"}
//     -> {"translatedText": "..." | [...]}
//   GET /languages -> [{"code": "en", "name": "en", "targets": ["de"]}]
// The model is the one served as SOURCE-TARGET (--model en-de=DIR); with a single translation
// model that reads text, that one whatever the languages. Errors are LibreTranslate's {"error": "..."} too.
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
    if (m->name == source + "-" + target) name = m->name;
    if (source == "auto" && m->name.size() > target.size() + 1 &&
        m->name.compare(m->name.size() - target.size() - 1, std::string::npos, "-" + target) == 0)
      name = m->name;
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
  std::map<std::string, std::vector<std::string>> targets;
  for (const auto& m : models_) {
    const size_t dash = m->name.find('-');
    if (m->classifier || dash == std::string::npos || !m->tokenizers()) continue;
    targets[m->name.substr(0, dash)].push_back(m->name.substr(dash + 1));
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [code, to] : targets) list.push_back({{"code", code}, {"name", code}, {"targets", to}});
  return list;
}

}  // namespace attn::serve
