#include "attn/decode/text.h"

#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"

namespace attn {

TranslationModel load_translation_model(const std::string& dir) {
  nlohmann::json config = read_json_file(dir + "/config.json");
  check(config.contains("tokenizer") && config["tokenizer"].is_string(), dir,
        "/config.json: no \"tokenizer\" entry (a model made by import-torch has none: use --ids)");
  std::string spm = dir + "/" + config["tokenizer"].get<std::string>();
  return TranslationModel{load_seq2seq(dir), data::Tokenizer::load(spm)};
}

}  // namespace attn
