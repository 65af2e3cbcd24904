// attn export: an attn model directory as another toolkit's, which that toolkit runs unchanged:
// today a CTranslate2 directory (models/ct2.h: export_ct2), written whole or not at all.
#include <cstdio>
#include <string>

#include "args.h"
#include "attn/models/ct2.h"

namespace attn::cli {

int run_export(int argc, char** argv) {
  CLI::App args{"Writes the attn translation model MODEL_DIR (a Transformer with a SentencePiece tokenizer) as\n"
                "another toolkit's model directory OUT_DIR. --to ct2: a CTranslate2 directory (model.bin in\n"
                "float32, config.json, the vocabulary, source.spm and target.spm) that ctranslate2.Translator\n"
                "runs and `attn import` reads back to the same weights (docs/models.md). CTranslate2's own\n"
                "--compute_type int8 / float16 quantizes it when it loads.",
                "attn export"};
  describe(args, "attn export --to ct2 runs/base runs/base-ct2\n"
                 "  python3 -c \"import ctranslate2; ctranslate2.Translator('runs/base-ct2')\"");
  std::string to, in, out;
  args.add_option("--to", to, "the toolkit: ct2 (CTranslate2)")->required()->check(CLI::IsMember({"ct2"}));
  args.add_option("MODEL_DIR", in, "the attn model directory")->required()->check(CLI::ExistingDirectory);
  args.add_option("OUT_DIR", out, "the directory to write (must not exist)")->required();
  if (!parse(args, argc, argv)) return 0;
  export_ct2(in, out);
  std::fprintf(stderr, "exported %s as a CTranslate2 model into %s\n", in.c_str(), out.c_str());
  return 0;
}

}  // namespace attn::cli
