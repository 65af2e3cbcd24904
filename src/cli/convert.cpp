// attn import-torch / export-torch: the model directory <-> torch_ref.py's directory.
#include <cstdio>

#include "attn/cli/args.h"
#include "attn/models/model_dir.h"

namespace attn::cli {

int run_import_torch(int argc, char** argv) {
  Args args("import-torch", "Reads REF_DIR/config.json and REF_DIR/weights.npz (as written by\n"
                            "torch_ref.py make) and writes the attn model directory MODEL_DIR.");
  args.positional("REF_DIR", "torch_ref.py's model directory").positional("MODEL_DIR", "attn model directory to write");
  if (!args.parse(argc, argv)) return 0;
  Transformer m = import_torch(args.str("REF_DIR"));
  save_transformer(m, args.str("MODEL_DIR"));
  std::fprintf(stderr, "imported %zu tensors into %s\n", m.parameters().size(), args.str("MODEL_DIR").c_str());
  return 0;
}

int run_export_torch(int argc, char** argv) {
  Args args("export-torch", "Writes MODEL_DIR as REF_DIR/config.json + REF_DIR/weights.npz, which\n"
                            "torch_ref.py (and numpy.load) read.");
  args.positional("MODEL_DIR", "attn model directory").positional("REF_DIR", "directory to write");
  if (!args.parse(argc, argv)) return 0;
  Transformer m = load_transformer(args.str("MODEL_DIR"));
  export_torch(m, args.str("REF_DIR"));
  std::fprintf(stderr, "exported %zu tensors to %s\n", m.named.size(), args.str("REF_DIR").c_str());
  return 0;
}

}  // namespace attn::cli
