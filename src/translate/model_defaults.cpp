#include "attn/translate/model_defaults.h"

#include "attn/error.h"
#include "attn/models/model_dir.h"

namespace attn {

TranslateOptions translate_defaults(const nlohmann::json& config, const std::string& source) {
  if (!config.contains("translate_defaults")) return {};
  const nlohmann::json& d = config["translate_defaults"];
  check(d.is_object(), source, ": \"translate_defaults\" must be an object of translation options, got ",
        d.dump().substr(0, 80));
  TranslateOptionsBuilder b([&](const OptionField& f) { return source + ": translate_defaults." + f.key; });
  for (const auto& [key, v] : d.items()) {
    const OptionField* f = find_translate_option(key, kJson);
    check(f != nullptr, source, ": translate_defaults.", key, " is not a translation option (translate/options.h)");
    check(key.rfind("sampling_", 0) != 0 && key != "num_hypotheses" && key != "seed", source, ": translate_defaults.",
          key, ": a model's defaults are its search's; sampling and n-best are the caller's to ask for");
    const std::string shown = v.dump().substr(0, 80);
    switch (f->type) {
      case OptionType::whole:
        check(v.is_number_integer(), source, ": translate_defaults.", key, " needs a whole number, got ", shown);
        b.set_whole(*f, v.get<int64_t>(), shown);
        break;
      case OptionType::real:
        check(v.is_number(), source, ": translate_defaults.", key, " needs a number, got ", shown);
        b.set_real(*f, v.get<double>(), shown);
        break;
      case OptionType::flag:
        check(v.is_boolean(), source, ": translate_defaults.", key, " needs true or false, got ", shown);
        b.set_flag(*f, v.get<bool>());
        break;
      case OptionType::choice:
        check(v.is_string(), source, ": translate_defaults.", key, " needs a name, got ", shown);
        b.set(*f, v.get<std::string>());
        break;
    }
  }
  return b.finish();
}

TranslateOptions translate_defaults(const std::string& dir) {
  const std::string path = dir + "/config.json";
  return translate_defaults(read_json_file(path), path);
}

}  // namespace attn
