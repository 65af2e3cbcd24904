#include "attn/decode/text.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"

namespace attn {
namespace {

// config[key] of type T, else `fallback`; another type is an error naming `where` and the key.
template <class T>
T entry(const nlohmann::json& j, const char* key, T fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  try {
    return j[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    fail(where, ": \"", key, "\" is ", j[key].dump().substr(0, 80), ", of the wrong type");
  }
}

// One side's {"sentencepiece": FILE, "vocabulary": FILE} of the object form.
std::shared_ptr<const data::Tokenizer> side(const std::string& dir, const nlohmann::json& t, const char* name,
                                            const data::VocabularyRules& rules, const std::string& where) {
  check(t.contains(name) && t[name].is_object(), where, ": \"tokenizer\" needs \"", name,
        "\": {\"sentencepiece\": FILE, \"vocabulary\": FILE}");
  const std::string at = where + ": tokenizer." + name;
  const std::string spm = entry<std::string>(t[name], "sentencepiece", "", at);
  const std::string vocab = entry<std::string>(t[name], "vocabulary", "", at);
  check(!spm.empty() && !vocab.empty(), at, " needs \"sentencepiece\" and \"vocabulary\" (file names in ", dir, ")");
  return std::make_shared<const data::Tokenizer>(
      data::Tokenizer::with_vocabulary(dir + "/" + spm, data::read_piece_vocabulary(dir + "/" + vocab), rules));
}

}  // namespace

std::vector<std::string> tokenizer_files(const nlohmann::json& config) {
  std::vector<std::string> files;
  if (!config.contains("tokenizer")) return files;
  const nlohmann::json& t = config["tokenizer"];
  if (t.is_string()) return {t.get<std::string>()};
  for (const char* side : {"source", "target"})
    for (const char* file : {"sentencepiece", "vocabulary"})
      if (t.is_object() && t.contains(side) && t[side].is_object() && t[side].contains(file) &&
          t[side][file].is_string() &&
          std::find(files.begin(), files.end(), t[side][file].get<std::string>()) == files.end())
        files.push_back(t[side][file].get<std::string>());
  return files;
}

Tokenizers load_tokenizers(const std::string& dir, const nlohmann::json& config) {
  const std::string where = dir + "/config.json";
  check(config.contains("tokenizer"), where,
        ": no \"tokenizer\" entry (a model made by import-torch has none: use --ids)");
  const nlohmann::json& t = config["tokenizer"];
  if (t.is_string()) {
    auto shared = std::make_shared<const data::Tokenizer>(data::Tokenizer::load(dir + "/" + t.get<std::string>()));
    return {shared, shared};
  }
  check(t.is_object(), where, ": \"tokenizer\" is a SentencePiece model's file name or an object naming each side's "
        "(\"source\", \"target\"), got ", t.dump().substr(0, 80));
  data::VocabularyRules rules;
  rules.specials = entry(t, "specials", rules.specials, where + ": tokenizer");
  rules.unk = entry(t, "unk", rules.unk, where + ": tokenizer");
  rules.language_codes = entry(t, "language_codes", rules.language_codes, where + ": tokenizer");
  rules.clean_up_spaces = entry(t, "clean_up_spaces", rules.clean_up_spaces, where + ": tokenizer");
  Tokenizers out;
  out.source = side(dir, t, "source", rules, where);
  // one object when both sides name the same files, as a shared vocabulary is one tokenizer
  out.target = t["target"] == t["source"] ? out.source : side(dir, t, "target", rules, where);
  out.source_eos = entry(t, "source_eos", true, where + ": tokenizer");
  return out;
}

TranslationModel load_translation_model(const std::string& dir) {
  const nlohmann::json config = read_json_file(dir + "/config.json");
  Tokenizers tokenizers = load_tokenizers(dir, config);
  Seq2Seq model = load_seq2seq(dir);
  const Seq2SeqCommon c = model.common();
  check(tokenizers.source->vocab_size() <= c.src_vocab && tokenizers.target->vocab_size() <= c.tgt_vocab, dir,
        ": the tokenizers' vocabularies (", tokenizers.source->vocab_size(), " source, ",
        tokenizers.target->vocab_size(), " target pieces) do not fit the model's (", c.src_vocab, ", ", c.tgt_vocab,
        ")");
  return TranslationModel{std::move(model), std::move(tokenizers)};
}

}  // namespace attn
