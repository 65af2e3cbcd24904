// attn import: a model another toolkit made, as an attn model directory. Today: a Hugging Face
// Marian directory (transformers' MarianMTModel, OPUS-MT's layout), its weights and config
// (models/hf_marian.h). The directory appears whole or not at all: it is written beside its name
// and renamed into place.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "args.h"
#include "attn/models/hf_marian.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"

namespace attn::cli {

namespace fs = std::filesystem;

int run_import(int argc, char** argv) {
  CLI::App args{"Reads a model directory another toolkit wrote and writes it as the attn model\n"
                "directory MODEL_DIR. Read today: Hugging Face Marian (config.json with \"model_type\":\n"
                "\"marian\", model.safetensors), OPUS-MT's models: the weights, the tokenizer\n"
                "(source.spm, target.spm, vocab.json) and generation_config.json's search, which\n"
                "becomes the model's default, so that `attn translate --model MODEL_DIR` gives\n"
                "transformers' generate() outputs (docs/models.md).",
                "attn import"};
  describe(args, "attn import opus-mt-en-de runs/opus-en-de");
  std::string in, out;
  args.add_option("DIR", in, "the other toolkit's model directory")->required();
  args.add_option("MODEL_DIR", out, "attn model directory to write (must not exist)")->required();
  if (!parse(args, argc, argv)) return 0;
  check(fs::is_directory(in), in, ": not a directory");
  check(is_hf_marian(in), in, "/config.json: not a model attn imports (it reads Hugging Face Marian: \"model_type\": ",
        "\"marian\")");
  check(!fs::exists(out), out, ": exists already; attn import writes a new directory");
  const Transformer m = import_hf_marian(in);
  const std::string tmp = out + ".tmp-" + std::to_string(::getpid());
  try {
    nlohmann::json extra = {{"imported_from", {{"format", "hf-marian"}, {"dir", fs::absolute(in).string()}}}};
    const HfGeneration g = hf_generation(in, m.config);
    if (!g.suppressed.empty()) extra["suppress_ids"] = g.suppressed;
    extra["translate_defaults"] = g.translate_defaults;
    const HfTokenizer t = hf_marian_tokenizer(in);
    if (!t.entry.is_null()) extra["tokenizer"] = t.entry;
    save_transformer(m, tmp, extra);
    for (const std::string& f : t.files) fs::copy_file(in + "/" + f, tmp + "/" + f);
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
  fs::rename(tmp, out);
  std::fprintf(stderr, "imported %s (Hugging Face Marian: d_model %lld, %lld+%lld layers, %s) into %s\n", in.c_str(),
               static_cast<long long>(m.config.d_model), static_cast<long long>(m.config.encoder_layers),
               static_cast<long long>(m.config.decoder_layers), name(m.config.activation), out.c_str());
  return 0;
}

}  // namespace attn::cli
