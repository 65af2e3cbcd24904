// attn shortlist: a vocabulary shortlist from a parallel corpus (decode/shortlist.h), for
// `attn translate --shortlist FILE`.
//   attn shortlist --model M --corpus train.en train.de --output list.safetensors [--top-k 200] [--frequent 500]
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "attn/data/text_file.h"
#include "attn/decode/id_lines.h"
#include "attn/decode/shortlist.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/models/model_dir.h"

namespace attn::cli {
namespace {

// A corpus file as ids: through the tokenizer, or parsed with --ids. Blank lines give no ids.
std::vector<std::vector<int32_t>> read_side(const std::string& path, const data::Tokenizer* tokenizer, int64_t vocab) {
  std::vector<std::vector<int32_t>> lines;
  for (const std::string& text : data::read_lines(path)) {
    const std::string where = path + ":" + std::to_string(lines.size() + 1);
    lines.push_back(tokenizer ? tokenizer->encode(text) : parse_ids(text, vocab, where));
  }
  return lines;
}

}  // namespace

int run_shortlist(int argc, char** argv) {
  CLI::App args{"Makes a vocabulary shortlist from a parallel corpus: for each source piece the --top-k target\n"
                "pieces of highest Dice coefficient 2 c(s,t) / (c(s) + c(t)) over the sentence pairs, plus the\n"
                "--frequent most frequent target pieces. `attn translate --shortlist FILE` then gives each\n"
                "sentence a softmax over its own list, and in small batches computes only those rows of the\n"
                "output layer (docs/decoding.md).",
                "attn shortlist"};
  describe(args, "attn shortlist --model runs/ende --corpus train.en train.de --output runs/ende/shortlist.safetensors");
  std::string model, output;
  std::vector<std::string> corpus;
  bool ids = false;
  ShortlistOptions o;
  add_model(args, model, "model directory (its tokenizer and vocabularies)");
  args.add_option("--corpus", corpus, "SRC TGT: the parallel corpus, one sentence a line, as many lines in each")
      ->expected(2)->type_name("SRC TGT")->required();
  add_text(args, "--output", output, "the shortlist file (safetensors)")->type_name("FILE")->required();
  add_int(args, "--top-k", o.top_k, 1, 1 << 20, "target pieces kept per source piece");
  add_int(args, "--frequent", o.frequent, 0, 1 << 24, "the most frequent target pieces, always allowed");
  args.add_flag("--ids", ids, "the corpus holds token ids, one sentence a line");
  if (!parse(args, argc, argv)) return 0;
  std::optional<TranslationModel> text_model;
  if (!ids) text_model.emplace(load_translation_model(model));
  const Seq2SeqCommon c = text_model ? text_model->model.common() : load_seq2seq(model).common();
  const auto sources = read_side(corpus[0], text_model ? text_model->tokenizers.source.get() : nullptr, c.src_vocab);
  const auto targets = read_side(corpus[1], text_model ? text_model->tokenizers.target.get() : nullptr, c.tgt_vocab);
  check(sources.size() == targets.size(), "--corpus: ", corpus[0], " has ", sources.size(), " lines, ", corpus[1],
        " has ", targets.size());
  const Shortlist s = build_shortlist(sources, targets, c.src_vocab, c.tgt_vocab, o);
  save_shortlist(s, output);
  size_t listed = 0, pieces = 0;
  for (const auto& row : s.by_source) {
    listed += row.size();
    pieces += !row.empty();
  }
  std::fprintf(stderr, "shortlist: %zu sentence pairs, %zu of %lld source pieces seen, %.1f target pieces each "
               "(top %d), %zu frequent; written to %s\n", sources.size(), pieces, static_cast<long long>(c.src_vocab),
               pieces ? static_cast<double>(listed) / static_cast<double>(pieces) : 0.0, o.top_k, s.frequent.size(),
               output.c_str());
  return 0;
}

}  // namespace attn::cli
