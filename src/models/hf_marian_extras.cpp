// What an imported OPUS-MT model keeps beside its weights: its generation settings as attn's
// translate_defaults, and its tokenizer (models/hf_marian.h).
#include <cmath>
#include <filesystem>

#include "attn/error.h"
#include "attn/models/hf_marian.h"
#include "attn/models/model_dir.h"
#include "hf_json.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// generation_config.json, or config.json when there is none (GenerationConfig.from_model_config),
// with the path it came from.
std::pair<nlohmann::json, std::string> generation_settings(const std::string& dir) {
  std::string path = dir + "/generation_config.json";
  if (!fs::exists(path)) path = dir + "/config.json";
  nlohmann::json j = read_json_file(path);
  check(j.is_object(), path, ": not a JSON object");
  return {j, path};
}

template <class T>
T setting(const nlohmann::json& j, const char* key, T fallback, const std::string& path) {
  return detail::hf_value(j, key, fallback, path, "GenerationConfig");
}

// A special token as tokenizer_config.json writes it: "</s>", or an AddedToken {"content": "</s>", ...}.
std::string token_text(const nlohmann::json& t, const std::string& path, const char* key) {
  if (t.is_string()) return t.get<std::string>();
  check(t.is_object() && t.contains("content") && t["content"].is_string(), path, ": \"", key,
        "\" is neither a token nor an AddedToken with \"content\"");
  return t["content"].get<std::string>();
}

}  // namespace

HfGeneration hf_generation(const std::string& dir, const TransformerConfig& c) {
  const auto [g, path] = generation_settings(dir);
  HfGeneration out;
  nlohmann::json& d = out.translate_defaults;
  check(!setting(g, "do_sample", false, path), path, ": \"do_sample\" is true; attn imports a model's search, not ",
        "sampling by default (ask for sampling when translating: --sampling-topk)");
  check(setting(g, "num_beam_groups", int64_t{1}, path) == 1, path, ": \"num_beam_groups\" > 1 (diverse beam search) ",
        "is not attn's search");
  check(setting(g, "repetition_penalty", 1.0, path) == 1.0, path, ": \"repetition_penalty\" acts on transformers' ",
        "logits, attn's on log-probs: the outputs would differ (set it to 1.0 to import)");
  d["search_rules"] = "transformers";
  d["beam_size"] = setting(g, "num_beams", int64_t{1}, path);
  d["length_penalty"] = setting(g, "length_penalty", 1.0, path);
  if (g.contains("early_stopping") && g["early_stopping"].is_string())
    fail(path, ": \"early_stopping\" is ", g["early_stopping"].dump(), "; attn follows true and false");
  d["early_stopping"] = setting(g, "early_stopping", false, path);
  d["renormalize_logits"] = setting(g, "renormalize_logits", false, path);
  const int64_t eos = setting(g, "eos_token_id", int64_t{c.eos_id}, path);
  d["eos_at_max_len"] = g.contains("forced_eos_token_id") && !g["forced_eos_token_id"].is_null() &&
                        setting(g, "forced_eos_token_id", int64_t{-1}, path) == eos;
  // transformers' max_length and min_length count the decoder's start token; attn's lengths do not
  const int64_t max_new = setting(g, "max_new_tokens", int64_t{0}, path);
  const int64_t max_length = setting(g, "max_length", int64_t{20}, path);
  d["max_decoding_length"] = std::min<int64_t>(max_new > 0 ? max_new : std::max<int64_t>(1, max_length - 1), c.max_len);
  const int64_t min_length = setting(g, "min_length", int64_t{0}, path);
  if (min_length > 1) d["min_decoding_length"] = min_length - 1;
  const int64_t no_repeat = setting(g, "no_repeat_ngram_size", int64_t{0}, path);
  if (no_repeat > 0) d["no_repeat_ngram_size"] = no_repeat;
  if (g.contains("bad_words_ids") && !g["bad_words_ids"].is_null()) {
    check(g["bad_words_ids"].is_array(), path, ": \"bad_words_ids\" is not a list");
    for (const nlohmann::json& seq : g["bad_words_ids"]) {
      check(seq.is_array() && seq.size() == 1 && seq[0].is_number_integer(), path, ": \"bad_words_ids\" holds ",
            seq.dump().substr(0, 80), "; attn suppresses single tokens only");
      out.suppressed.push_back(seq[0].get<int32_t>());
    }
  }
  return out;
}

HfTokenizer hf_marian_tokenizer(const std::string& dir) {
  HfTokenizer out;
  if (!fs::exists(dir + "/source.spm")) return out;
  const std::string path = dir + "/tokenizer_config.json";
  const nlohmann::json t = fs::exists(path) ? read_json_file(path) : nlohmann::json::object();
  check(t.is_object(), path, ": not a JSON object");
  // MarianTokenizer's __init__ defaults
  std::vector<std::string> specials;
  const std::pair<const char*, const char*> named[] = {{"eos_token", "</s>"}, {"unk_token", "<unk>"}, {"pad_token", "<pad>"}};
  for (const auto& [key, fallback] : named)
    specials.push_back(t.contains(key) && !t[key].is_null() ? token_text(t[key], path, key) : fallback);
  if (t.contains("additional_special_tokens") && t["additional_special_tokens"].is_array())
    for (const nlohmann::json& a : t["additional_special_tokens"])
      specials.push_back(token_text(a, path, "additional_special_tokens"));
  const bool separate = setting(t, "separate_vocabs", false, path);
  nlohmann::json source = {{"sentencepiece", "source.spm"}, {"vocabulary", "vocab.json"}};
  nlohmann::json target = {{"sentencepiece", "target.spm"}, {"vocabulary", separate ? "target_vocab.json" : "vocab.json"}};
  out.files = {"source.spm", "target.spm", "vocab.json"};
  if (separate) out.files.push_back("target_vocab.json");
  for (const std::string& f : out.files)
    check(fs::exists(dir + "/" + f), dir, "/", f, ": no such file (a Marian tokenizer has source.spm, target.spm and ",
          "vocab.json", separate ? ", and target_vocab.json with separate_vocabs" : "", ")");
  out.entry = {{"source", source}, {"target", target}, {"specials", specials}, {"unk", specials[1]},
               {"language_codes", true},
               {"clean_up_spaces", setting(t, "clean_up_tokenization_spaces", false, path)}};
  return out;
}

}  // namespace attn
