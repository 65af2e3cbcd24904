// attn score: the log-probability of each target given its source (teacher forcing), as
// torch_ref.py's score: sum_t log p(y_t | y_<t, x) over the target followed by eos.
//   attn score --model M --ids --src source.ids --tgt target.ids [--batch 32]
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "attn/cli/args.h"
#include "attn/decode/batch.h"
#include "attn/decode/id_lines.h"
#include "attn/decode/score.h"
#include "attn/error.h"
#include "attn/kernels/gemm.h"
#include "attn/models/model_dir.h"

namespace attn::cli {
namespace {

// The lines of an id file; each at most max_tokens ids in [0, vocab).
std::vector<std::vector<int32_t>> read_id_file(const std::string& path, int64_t vocab, int64_t max_tokens) {
  std::ifstream in(path);
  check(in.good(), "cannot open '", path, "'");
  std::vector<std::vector<int32_t>> lines;
  std::string text;
  while (std::getline(in, text)) {
    std::string where = path + ":" + std::to_string(lines.size() + 1);
    lines.push_back(parse_ids(text, vocab, where));
    check(static_cast<int64_t>(lines.back().size()) <= max_tokens, where, ": ", lines.back().size(),
          " tokens, more than the model's positions allow (", max_tokens, ")");
  }
  return lines;
}

}  // namespace

int run_score(int argc, char** argv) {
  Args args("score",
            "Prints, a line per sentence pair, the total log-probability of the target given the\n"
            "source: sum_t log p(y_t | y_<t, x) over the target ids followed by eos, bos as the\n"
            "first decoder input (torch_ref.py's score). Source lines are fed to the encoder as given.");
  args.option("model", "model directory (config.json + model.safetensors)")
      .flag("ids", "the files hold token ids, one sentence a line")
      .option("src", "source file")
      .option("tgt", "target file, as many lines as the source")
      .option("batch", "sentence pairs scored together", "32")
      .option("threads", "threads for the matrix products and attn's loops (default: all cores)");
  if (!args.parse(argc, argv)) return 0;
  check(args.has("model"), "missing --model DIR (see attn score --help)");
  check(args.has("src") && args.has("tgt"), "missing --src FILE or --tgt FILE (see attn score --help)");
  check(args.on("ids"), "text input needs the model's tokenizer, which attn does not support yet; "
                        "pass --ids and files of token ids");
  if (args.has("threads")) set_num_threads(args.integer("threads"));
  int batch = args.integer("batch");
  check(batch >= 1, "--batch must be at least 1, got ", batch);

  Transformer m = load_transformer(args.str("model"));
  const std::string src_path = args.str("src"), tgt_path = args.str("tgt");
  auto sources = read_id_file(src_path, m.config.src_vocab, m.config.max_len);
  auto targets = read_id_file(tgt_path, m.config.tgt_vocab, m.config.max_len - 1);  // bos goes first
  check(sources.size() == targets.size(), "line counts differ: --src ", src_path, " has ",
        sources.size(), " lines, --tgt ", tgt_path, " has ", targets.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    bool all_pad = true;
    for (int32_t id : sources[i]) all_pad = all_pad && id == m.config.pad_id;
    check(!all_pad, src_path, ":", i + 1, ": empty source line, or only padding ids ",
          m.config.pad_id, " (nothing to condition on)");
  }

  std::vector<size_t> lengths;
  for (size_t i = 0; i < sources.size(); ++i) lengths.push_back(sources[i].size() + targets[i].size());
  std::vector<double> totals(sources.size());
  for (const auto& group : length_sorted_batches(lengths, static_cast<size_t>(batch))) {
    std::vector<std::vector<int32_t>> src, tgt;
    for (size_t i : group) {
      src.push_back(sources[i]);
      tgt.push_back(targets[i]);
    }
    std::vector<double> out = score_translations(m, src, tgt);
    for (size_t j = 0; j < group.size(); ++j) totals[group[j]] = out[j];
  }
  for (double t : totals) std::printf("%.6f\n", t);
  return 0;
}

}  // namespace attn::cli
