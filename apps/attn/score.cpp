// attn score: the log-probability of each target given its source (teacher forcing), as
// torch_ref.py's score: sum_t log p(y_t | y_<t, x) over the target followed by eos.
//   attn score --model M --ids --src source.ids --tgt target.ids [--batch 32] [--precision fp32|bf16|int8]
//   attn score --model M --src source.txt --tgt target.txt        (text: the model's SentencePiece model)
//   attn score --model A --model B [--weights 0.6,0.4] ...         (an ensemble: sum_m w_m score_m)
// --batch is the library's table of scoring options (translate/score_options.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "attn/data/text_file.h"
#include "attn/decode/batch.h"
#include "attn/decode/ensemble.h"
#include "attn/decode/id_lines.h"
#include "attn/decode/score.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/runtime.h"
#include "attn/translate/score_options.h"
#include "attn/translate/translator.h"

namespace attn::cli {
namespace {

// The lines of an id file; each at most max_tokens ids in [0, vocab).
std::vector<std::vector<int32_t>> read_id_file(const std::string& path, int64_t vocab, int64_t max_tokens) {
  data::check_not_directory(path, "id file");
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
  CLI::App args{"Prints, a line per sentence pair, the total log-probability of the target given the\n"
                "source: sum_t log p(y_t | y_<t, x) over the target ids followed by eos, bos as the\n"
                "first decoder input (torch_ref.py's score). With --ids, source lines are fed to the encoder\n"
                "as given; text is tokenised with the model's SentencePiece model (eos appended to the source).\n"
                "Several --model: an ensemble's score, sum_m w_m score_m (= sum_t sum_m w_m log p_m(y_t)).",
                "attn score"};
  describe(args, "attn score --model runs/ende --src news.en --tgt news.de > scores.txt\n"
                 "  attn score --model runs/a --model runs/b --weights 0.6,0.4 --src news.en --tgt news.de");
  std::vector<std::string> model_dirs;
  std::string src_path, tgt_path, precision_flag, weights_flag;
  bool ids = false;
  int threads = 0;
  add_repeated(args, "--model", model_dirs, "model directory (config.json + model.safetensors); twice or more: "
               "an ensemble")->type_name("DIR")->required();
  args.add_option("--weights", weights_flag, "ensemble: comma-separated weights of the models' log-probs "
                  "(default: 1/M each)");
  args.add_flag("--ids", ids, "the files hold token ids, one sentence a line");
  add_text(args, "--src", src_path, "source file")->required();
  add_text(args, "--tgt", tgt_path, "target file, as many lines as the source")->required();
  ScoreOptionsBuilder options(flag_of<ScoreOptions>);
  add_option_flags(args, options, score_option_fields());
  CLI::Option* threads_given = add_threads(args, threads, "all cores");
  add_precision(args, precision_flag);
  if (!parse(args, argc, argv)) return 0;
  if (threads_given->count()) set_threads(threads);

  TranslatorOptions to;
  to.models = model_dirs;
  if (!precision_flag.empty()) to.precision = parse_precision(precision_flag, "--precision");
  to.vocabulary = ids ? Vocabulary::ids : Vocabulary::text;
  to.weights = parse_weights(weights_flag, model_dirs.size(), "--weights");
  const Translator translator(to);
  const Tokenizers& tokenizers = translator.tokenizers();
  Seq2SeqCommon config = translator.config();
  for (const Seq2Seq& m : translator.models()) {  // ids every model can read
    config.src_vocab = std::min(config.src_vocab, m.common().src_vocab);
    config.max_len = std::min(config.max_len, m.common().max_len);
  }
  auto sources = tokenizers ? encode_score_lines(data::read_lines(src_path), src_path, *tokenizers.source, tokenizers.source_eos ? config.eos_id : -1, config.max_len)
                           : read_id_file(src_path, config.src_vocab, config.max_len);
  auto targets = tokenizers ? encode_score_lines(data::read_lines(tgt_path), tgt_path, *tokenizers.target, -1, config.max_len)
                           : read_id_file(tgt_path, config.tgt_vocab, config.max_len - 1);  // bos goes first
  check(sources.size() == targets.size(), "line counts differ: --src ", src_path, " has ",
        sources.size(), " lines, --tgt ", tgt_path, " has ", targets.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    bool all_pad = true;
    for (int32_t id : sources[i]) all_pad = all_pad && id == config.pad_id;
    check(!all_pad, src_path, ":", i + 1, ": empty source line, or only padding ids ",
          config.pad_id, " (nothing to condition on)");
  }
  for (double t : translator.score(sources, targets, static_cast<int>(options.options().batch))) std::printf("%.6f\n", t);
  return 0;
}

}  // namespace attn::cli
