// attn import-torch / export-torch: the model directory <-> PyTorch's directory (config.json +
// weights.npz): torch_ref.py's for the Transformer, tests/rnn/torch_rnn.py's for `model: rnn`.
#include <cstdio>

#include "args.h"
#include "attn/models/model_dir.h"
#include "attn/models/rnn_seq2seq_torch.h"
#include "attn/models/seq2seq.h"

namespace attn::cli {

int run_import_torch(int argc, char** argv) {
  CLI::App args{"Reads REF_DIR/config.json and REF_DIR/weights.npz (as written by\n"
                "torch_ref.py make, or export-torch; \"model\": \"rnn\" for the RNN\n"
                "encoder-decoder of tests/rnn/torch_rnn.py) and writes the attn model directory MODEL_DIR.",
                "attn import-torch"};
  describe(args, "attn import-torch reference/base runs/base");
  std::string ref, model_dir;
  args.add_option("REF_DIR", ref, "torch_ref.py's model directory")->required();
  args.add_option("MODEL_DIR", model_dir, "attn model directory to write")->required();
  if (!parse(args, argc, argv)) return 0;
  nlohmann::json j = read_json_file(ref + "/config.json");
  bool rnn = j.contains("model") && j["model"] == "rnn";
  Seq2Seq m = rnn ? as_seq2seq(import_torch_rnn(ref)) : as_seq2seq(import_torch(ref));
  save_seq2seq(m, model_dir);
  std::fprintf(stderr, "imported %zu tensors into %s\n", m.parameters().size(), model_dir.c_str());
  return 0;
}

int run_export_torch(int argc, char** argv) {
  CLI::App args{"Writes MODEL_DIR as REF_DIR/config.json + REF_DIR/weights.npz, which\n"
                "torch_ref.py (Transformer), tests/rnn/torch_rnn.py (model: rnn) and numpy.load read.",
                "attn export-torch"};
  describe(args, "attn export-torch runs/ende runs/ende-torch");
  std::string model_dir, ref;
  args.add_option("MODEL_DIR", model_dir, "attn model directory")->required();
  args.add_option("REF_DIR", ref, "directory to write")->required();
  if (!parse(args, argc, argv)) return 0;
  Seq2Seq m = load_seq2seq(model_dir);
  size_t n = 0;
  if (const auto* rnn = std::get_if<RnnSeq2Seq>(&m.net)) {
    export_torch_rnn(*rnn, ref);
    n = rnn->named.size();
  } else {
    export_torch(std::get<Transformer>(m.net), ref);
    n = std::get<Transformer>(m.net).named.size();
  }
  std::fprintf(stderr, "exported %zu tensors to %s\n", n, ref.c_str());
  return 0;
}

}  // namespace attn::cli
