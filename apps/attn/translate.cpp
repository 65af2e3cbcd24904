// attn translate: greedy or beam search (or sampling) over standard input, one sentence a line.
//   attn translate --model M [--model M2 --weights 0.6,0.4] [--ids] [--beam 4] [--length-penalty 0.6]
//                  [--sampling-topk K --sampling-topp P --sampling-temperature T --seed S]
//                  [--prefix FILE] [--min-len N] [--max-len N | --max-len-a A --max-len-b B]
//                  [--no-repeat-ngram N] [--repetition-penalty R] [--batch 32 | --batch-tokens N]
//                  [--input FILE] [--output FILE] [--n-best 1] [--threads N] [--precision fp32|bf16|int8]
//                  [--alignment hard|soft [--alignment-layer L] [--alignment-words]] [--output-format text|jsonl]
// The decoding options are the library's table (translate/options.h), each a flag here; the work is
// the library's Translator (translate/translator.h), read line by line in translate_run.cpp.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "args.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/runtime.h"
#include "translate_flags.h"
#include "attn/translate/file.h"
#include "attn/translate/model_defaults.h"

namespace attn::cli {

std::string flag_name(const OptionField& f) { return f.flag; }

void add_option_flags(CLI::App& app, TranslateOptionsBuilder& b) {
  for (const OptionField& f : translate_option_fields()) {
    if ((f.front_ends & kCli) == 0) continue;
    CLI::Option* o = nullptr;
    if (f.type == OptionType::flag) {
      o = app.add_flag_function(f.flag, [&b, &f](int64_t count) { b.set_flag(f, count > 0); }, f.help);
    } else {
      // --alignment alone asks for hard alignments.
      auto set = [&b, &f](const std::string& text) { b.set(f, text.empty() && f.key == "alignment" ? "hard" : text); };
      o = app.add_option_function<std::string>(f.flag, set, f.help)->type_name(f.value_name);
      if (f.key == "alignment") o->expected(0, 1);
      else o->default_str(f.default_text());
    }
    if (!f.group.empty()) o->group(f.group);
  }
}

bool parse_translate_flags(int argc, char** argv, TranslateFlags& f) {
  CLI::App args{"Translates standard input (or --input) to standard output (or --output), one sentence a line,\n"
                "with greedy (--beam 1) or beam search, or by sampling. Text is tokenised with the model's\n"
                "SentencePiece model (eos appended) and the output detokenised. With --ids, lines are\n"
                "space-separated token ids, fed to the encoder exactly as given (add eos yourself if the model\n"
                "expects it); the output is the ids without eos. A blank line (empty or only spaces) gives an\n"
                "empty line; a line longer than the model's positions is split (--on-long). Input is UTF-8; a\n"
                "'\\r' before the newline is dropped. Several --model: one search over their weighted log-probs.\n"
                "docs/decoding.md describes every option.",
                "attn translate"};
  describe(args, "attn translate --model runs/ende --beam 4 < news.en > news.de\n"
                 "  attn translate --model runs/a --model runs/b --weights 0.6,0.4 --input news.en --output news.de\n"
                 "  attn translate --model runs/ende --sampling-topp 0.9 --seed 1 --n-best 5 < news.en\n"
                 "  attn translate --model runs/ende --prefix starts.de --no-repeat-ngram 3 < news.en");
  add_repeated(args, "--model", f.models, "model directory (config.json + model.safetensors); twice or more: "
               "an ensemble (e.g. --model a --model b --weights 0.6,0.4)")->type_name("DIR")->required();
  args.add_option("--weights", f.weights, "ensemble: comma-separated weights of the models' log-probs "
                  "(default: 1/M each, their average)")->type_name("W1,W2,..")->group("Ensemble");
  args.add_flag("--ids", f.ids, "read and write token ids instead of text");
  add_threads(args, f.threads, "all cores");
  add_precision(args, f.precision);
  const std::string io = "Input, output and batching";
  add_text(args, "--input", f.input, "read FILE instead of standard input")->type_name("FILE")->group(io);
  add_text(args, "--output", f.output_path, "write FILE (atomically, at the end) instead of standard output")
      ->type_name("FILE")->group(io);
  add_text(args, "--shortlist", f.shortlist, "FILE from attn shortlist: each sentence may output only "
           "the target pieces listed for its source pieces, plus the frequent ones (renormalised over "
           "them); in small batches the output layer computes only the lists' rows (e.g. --shortlist list.safetensors)")
      ->type_name("FILE")->group(io);
  add_text(args, "--prefix", f.prefix,
           "FILE: line N holds the start of output N (text through the model's tokenizer, or ids with --ids; "
           "blank: none); the search goes on from it (e.g. --prefix starts.de)")
      ->type_name("FILE")->group("Prefix, length and repetition");
  std::string format = "text";
  args.add_option("--output-format", format,
                  "text, or jsonl: one JSON object a line (text, tokens, ids, score, logprob, finished: false when "
                  "cut off at --max-len; n_best with --n-best; alignment and source_tokens with --alignment)")
      ->group("Output");
  TranslateOptionsBuilder options(flag_name);
  add_option_flags(args, options);
  if (!parse(args, argc, argv)) return false;
  // the first model's own defaults (an imported model's search), where no flag gives the option
  if (!f.models.empty() && std::filesystem::exists(f.models.front() + "/config.json"))
    options.defaults_from(translate_defaults(f.models.front()));
  f.options = options.finish();
  check(args.count("--weights") == 0 || !f.weights.empty(), "--weights needs a value");
  check(format == "text" || format == "jsonl", "--output-format must be text or jsonl, got '", format, "'");
  f.jsonl = format == "jsonl";
  if (f.ids) check_for_ids(f.options, flag_name, "--ids");
  return true;
}

TranslatorOptions translator_options(const TranslateFlags& f) {
  TranslatorOptions t;
  t.models = f.models;
  t.weights = parse_weights(f.weights, f.models.size(), "--weights");
  if (!f.precision.empty()) t.precision = parse_precision(f.precision, "--precision");
  t.vocabulary = f.ids ? Vocabulary::ids : Vocabulary::text;
  t.shortlist = f.shortlist;
  return t;
}

int run_translate(int argc, char** argv) {
  TranslateFlags f;
  if (!parse_translate_flags(argc, argv, f)) return 0;
  if (f.threads > 0) set_threads(f.threads);
  const Translator translator(translator_options(f));
  translator.check_options(f.options, flag_name);
  TranslateFile run;
  run.text = !f.ids;
  run.jsonl = f.jsonl;
  run.input = f.input;
  run.output = f.output_path;
  run.prefix_path = f.prefix;
  run.progress = isatty(fileno(stderr)) != 0;
  return translate_file(translator, f.options, run);
}

}  // namespace attn::cli
