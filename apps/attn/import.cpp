// attn import: a model another toolkit made, as an attn model directory: a Hugging Face Marian
// directory (transformers' MarianMTModel, OPUS-MT's layout; models/hf_marian.h) or a CTranslate2
// directory (models/ct2.h), its weights, config, tokenizer and search. The directory appears whole
// or not at all: it is written beside its name and renamed into place.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "args.h"
#include "attn/models/argos.h"
#include "attn/models/ct2.h"
#include "attn/models/hf_marian.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

// What a model directory attn writes holds besides the weights: config.json's extra entries and
// the tokenizer's files (path, name).
struct Imported {
  const char* format;
  Transformer model;
  nlohmann::json extra;
  std::vector<std::pair<std::string, std::string>> files;
};

Imported from_hf_marian(const std::string& in) {
  Imported m{"Hugging Face Marian", import_hf_marian(in), {}, {}};
  m.extra = {{"imported_from", {{"format", "hf-marian"}, {"dir", fs::absolute(in).string()}}}};
  const HfGeneration g = hf_generation(in, m.model.config);
  if (!g.suppressed.empty()) m.extra["suppress_ids"] = g.suppressed;
  m.extra["translate_defaults"] = g.translate_defaults;
  const HfTokenizer t = hf_marian_tokenizer(in);
  if (!t.entry.is_null()) m.extra["tokenizer"] = t.entry;
  for (const std::string& f : t.files) m.files.push_back({in + "/" + f, f});
  return m;
}

Imported from_ct2(const std::string& in, const std::string& sentencepiece) {
  Ct2Model c = import_ct2(in, sentencepiece);
  Imported m{"CTranslate2", std::move(c.model), {}, std::move(c.files)};
  m.extra = {{"imported_from", {{"format", "ctranslate2"}, {"dir", fs::absolute(in).string()}}},
             {"translate_defaults", c.translate_defaults}};
  if (!c.tokenizer.is_null()) m.extra["tokenizer"] = c.tokenizer;
  return m;
}

Imported from_argos(const std::string& in, const std::string& work) {
  ArgosModel a = import_argos(in, work);
  Imported m{"Argos Translate", std::move(a.model.model), {}, std::move(a.model.files)};
  m.extra = {{"imported_from", {{"format", "argos"}, {"file", fs::absolute(in).string()}, {"metadata", a.metadata}}},
             {"translate_defaults", a.model.translate_defaults},
             {"tokenizer", a.model.tokenizer},
             {"languages", a.languages}};
  return m;
}

}  // namespace

int run_import(int argc, char** argv) {
  CLI::App args{"Reads a model directory another toolkit wrote and writes it as the attn model\n"
                "directory MODEL_DIR. Read today: Hugging Face Marian (config.json with \"model_type\":\n"
                "\"marian\", model.safetensors), OPUS-MT's models: the weights, the tokenizer\n"
                "(source.spm, target.spm, vocab.json) and generation_config.json's search, which\n"
                "becomes the model's default, so that `attn translate --model MODEL_DIR` gives\n"
                "transformers' generate() outputs; and CTranslate2 directories (model.bin, config.json,\n"
                "the vocabularies; float32, int8, int16, float16 or bfloat16 weights, read as float32),\n"
                "with CTranslate2's translate_batch search as the default; and Argos Translate packages\n"
                "(.argosmodel: its CTranslate2 model, sentencepiece.model, and metadata.json's languages,\n"
                "which attn serve's LibreTranslate routes answer with), searched as Argos does (docs/models.md).",
                "attn import"};
  describe(args, "attn import opus-mt-en-de runs/opus-en-de\n  attn import opus-mt-en-de-ct2 runs/opus-en-de-ct2\n  attn import translate-en_de-1_0.argosmodel runs/argos-en-de");
  std::string in, out, sentencepiece;
  args.add_option("DIR", in, "the other toolkit's model directory, or an Argos package (FILE.argosmodel)")->required();
  args.add_option("MODEL_DIR", out, "attn model directory to write (must not exist)")->required();
  args.add_option("--sentencepiece", sentencepiece,
                  "CTranslate2: the SentencePiece model both sides share, when DIR has no source.spm and target.spm")
      ->check(CLI::ExistingFile);
  if (!parse(args, argc, argv)) return 0;
  const bool argos = is_argos_package(in);
  check(argos || fs::is_directory(in), in, ": neither a directory nor an Argos package (.argosmodel)");
  check(argos || is_hf_marian(in) || is_ct2_dir(in), in, ": not a model attn imports (it reads Hugging Face Marian: ",
        "config.json with \"model_type\": \"marian\"; CTranslate2: model.bin; Argos Translate: FILE.argosmodel)");
  check(!fs::exists(out), out, ": exists already; attn import writes a new directory");
  const std::string tmp = out + ".tmp-" + std::to_string(::getpid()), unpacked = tmp + ".argos";
  try {
    fs::create_directories(unpacked);
    const Imported m = argos ? from_argos(in, unpacked) : is_hf_marian(in) ? from_hf_marian(in) : from_ct2(in, sentencepiece);
    save_transformer(m.model, tmp, m.extra);
    for (const auto& [from, name] : m.files) fs::copy_file(from, tmp + "/" + name);
    fs::rename(tmp, out);
    fs::remove_all(unpacked);
    std::fprintf(stderr, "imported %s (%s: d_model %lld, %lld+%lld layers, %s) into %s\n", in.c_str(), m.format,
                 static_cast<long long>(m.model.config.d_model), static_cast<long long>(m.model.config.encoder_layers),
                 static_cast<long long>(m.model.config.decoder_layers), name(m.model.config.activation), out.c_str());
  } catch (...) {
    fs::remove_all(tmp);
    fs::remove_all(unpacked);
    throw;
  }
  return 0;
}

}  // namespace attn::cli
