// attn translate: greedy or beam search (or sampling) over standard input, one sentence a line.
//   attn translate --model M [--model M2 --weights 0.6,0.4] [--ids] [--beam 4] [--length-penalty 0.6]
//                  [--sampling-topk K --sampling-topp P --sampling-temperature T --seed S]
//                  [--prefix FILE] [--min-len N] [--max-len N | --max-len-a A --max-len-b B]
//                  [--no-repeat-ngram N] [--repetition-penalty R] [--batch 32 | --batch-tokens N]
//                  [--input FILE] [--output FILE] [--n-best 1] [--threads N] [--precision fp32|bf16|int8]
//                  [--alignment hard|soft [--alignment-layer L] [--alignment-words]] [--output-format text|jsonl]
// The flags are parsed here into plain option structs; the work is in translate_run.cpp and the
// library's decode layer (include/attn/decode/). Every input line gives its output line.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/model_dir.h"
#include "attn/runtime.h"
#include "translate_flags.h"
#include "translate_run.h"

namespace attn::cli {
namespace {


// --alignment [hard|soft], --alignment-layer, --alignment-words, --output-format text|jsonl.
void add_output_flags(CLI::App& args, OutputOptions& out, std::string& format) {
  const std::string group = "Output";
  args.add_option("--alignment", out.alignment,
                  "after each translation, ' ||| ' and the word alignment from the encoder-decoder attention "
                  "(heads averaged; with an ensemble, the first model's): hard (default) 'source-target' index "
                  "pairs, or soft (the rows of weights)")
      ->expected(0, 1)->group(group);
  add_int(args, "--alignment-layer", out.alignment_layer, 0, 1 << 16,
          "the decoder layer alignments are read from, 1-based (0: the second-to-last)")->group(group);
  args.add_flag("--alignment-words", out.alignment_words,
                "align whitespace words instead of SentencePiece pieces")->group(group);
  args.add_option("--output-format", format,
                  "text, or jsonl: one JSON object a line (text, tokens, ids, score, logprob, finished: false when cut off at --max-len; "
                  "n_best with --n-best; "
                  "alignment and source_tokens with --alignment)")->group(group);
}

// --sampling-topk, --sampling-topp, --sampling-temperature, --seed (decode/sampling.h).
void add_sampling_flags(CLI::App& args, TranslateFlags& f) {
  const std::string group = "Sampling (beam 1; e.g. --sampling-topk 10 --sampling-temperature 0.8 --seed 7)";
  SamplingOptions& s = f.search.sampling;
  add_int(args, "--sampling-topk", s.top_k, 0, 1 << 24,
          "sample each next token from the K most probable (0: from all; 1: greedy)")->group(group);
  add_real(args, "--sampling-topp", s.top_p, 1e-9, 1,
           "sample from the fewest most probable tokens whose probability reaches P (nucleus)")->group(group);
  add_real(args, "--sampling-temperature", s.temperature, 1e-6, 1e6,
           "divide the log-probs by T before the softmax (< 1 sharper, > 1 flatter)")->group(group);
  args.add_option("--seed", f.seed, "the random stream's seed; an output depends only on it, its input line and "
                  "the model (not on batching or threads). With --n-best N: N independent samples")
      ->type_name("S")->default_str("0")->group(group);
}

// --prefix, --min-len, --max-len(-a/-b), --no-repeat-ngram, --repetition-penalty (decode/constraints.h).
void add_constraint_flags(CLI::App& args, TranslateFlags& f) {
  const std::string group = "Prefix, length and repetition";
  SearchOptions& o = f.search;
  add_text(args, "--prefix", f.prefix,
           "FILE: line N holds the start of output N (text through the model's tokenizer, or ids with --ids; "
           "blank: none); the search goes on from it (e.g. --prefix starts.de)")->type_name("FILE")->group(group);
  add_int(args, "--min-len", o.min_len, 0, 1 << 24, "no eos before the output holds N tokens (prefix included)")
      ->group(group);
  add_int(args, "--max-len", o.max_len, 0, 1 << 24, "most tokens output, eos included (0: A x source length + B)")
      ->group(group);
  add_real(args, "--max-len-a", o.max_len_a, 0, 1e6, "A of the maximum length A x source length + B")->group(group);
  add_int(args, "--max-len-b", o.max_len_b, 0, 1 << 24, "B of the maximum length A x source length + B")
      ->group(group);
  add_int(args, "--no-repeat-ngram", o.no_repeat_ngram, 0, 1 << 16,
          "no N-gram of tokens twice in an output (e.g. --no-repeat-ngram 3; 0: off)")->group(group);
  add_real(args, "--repetition-penalty", o.repetition_penalty, 1e-6, 1e6,
           "log-probs of tokens already in the output times R, then renormalised (R > 1 discourages "
           "repeats; e.g. --repetition-penalty 1.2)")->group(group);
}

// The rest: model(s), search, batching, input and output.
void add_main_flags(CLI::App& args, TranslateFlags& f) {
  SearchOptions& o = f.search;
  add_repeated(args, "--model", f.models, "model directory (config.json + model.safetensors); twice or more: "
               "an ensemble (e.g. --model a --model b --weights 0.6,0.4)")->type_name("DIR")->required();
  args.add_option("--weights", f.weights, "ensemble: comma-separated weights of the models' log-probs "
                  "(default: 1/M each, their average)")->type_name("W1,W2,..")->group("Ensemble");
  args.add_flag("--ids", f.ids, "read and write token ids instead of text");
  add_beam(args, o.beam);
  add_real(args, "--length-penalty", o.length_penalty, 0, 100, "alpha of the GNMT length penalty ((5+len)/6)^alpha");
  add_int(args, "--n-best", o.n_best, 1, 1024, "print the N best as 'i ||| ids ||| score' lines (i from 0; score: "
          "log-prob over the length penalty); with sampling, N samples");
  add_threads(args, f.threads, "all cores");
  add_precision(args, f.precision);
  const std::string io = "Input, output and batching";
  add_text(args, "--input", f.input, "read FILE instead of standard input")->type_name("FILE")->group(io);
  add_text(args, "--output", f.output_path, "write FILE (atomically, at the end) instead of standard output")->type_name("FILE")
      ->group(io);
  add_batch(args, f.batch, "sentences decoded together")->group(io);
  add_int(args, "--batch-tokens", f.batch_tokens, 0, 1 << 24, "batches of at most N source tokens instead of "
          "--batch sentences (CTranslate2's batch_type tokens; e.g. --batch-tokens 2048)")->group(io);
  args.add_option("--on-long", f.on_long,
                  "a source longer than the model's positions: split (default: translated in pieces that fit, "
                  "their outputs joined on its line; nothing is lost), truncate (its first positions), or "
                  "error (stop); split and truncate warn with the line number")
      ->check(CLI::IsMember({"split", "truncate", "error"}))->group(io);
  add_text(args, "--shortlist", f.shortlist, "FILE from attn shortlist: each sentence may output only "
           "the target pieces listed for its source pieces, plus the frequent ones (renormalised over "
           "them); in small batches the output layer computes only the lists' rows (e.g. --shortlist list.safetensors)")
      ->type_name("FILE")->group(io);
}

// The checks between flags, once parsed.
void check_flags(const CLI::App& args, TranslateFlags& f, const std::string& format) {
  SearchOptions& o = f.search;
  SamplingOptions& s = o.sampling;
  s.on = args.count("--sampling-topk") + args.count("--sampling-topp") + args.count("--sampling-temperature") > 0;
  s.seed = static_cast<uint64_t>(parse_whole("--seed", f.seed, 0, INT64_MAX));
  if (s.on) {
    check(args.count("--beam") == 0 || o.beam == 1, "sampling draws one token per step: --beam must be 1, got ", o.beam);
    o.beam = 1;
  } else {
    check(o.n_best <= o.beam, "--n-best must be between 1 and --beam (", o.beam, "), got ", o.n_best);
  }
  check(args.count("--max-len") == 0 || args.count("--max-len-a") + args.count("--max-len-b") == 0,
        "--max-len is a fixed length; --max-len-a/--max-len-b give one per source: use one or the other");
  check(args.count("--weights") == 0 || !f.weights.empty(), "--weights needs a value");
  f.output.n_best = args.count("--n-best") > 0;
  check(format == "text" || format == "jsonl", "--output-format must be text or jsonl, got '", format, "'");
  f.output.jsonl = format == "jsonl";
  OutputOptions& out = f.output;
  if (args.count("--alignment") > 0 && out.alignment.empty()) out.alignment = "hard";
  check(out.alignment.empty() || out.alignment == "hard" || out.alignment == "soft",
        "--alignment must be hard or soft, got '", out.alignment, "'");
  check(out.alignment.size() || (out.alignment_layer == 0 && !out.alignment_words),
        "--alignment-layer and --alignment-words need --alignment");
  check(!(out.alignment_words && f.ids), "--alignment-words needs text (SentencePiece pieces), not --ids");
}

}  // namespace

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
  add_main_flags(args, f);
  add_sampling_flags(args, f);
  add_constraint_flags(args, f);
  std::string format = "text";
  add_output_flags(args, f.output, format);
  if (!parse(args, argc, argv)) return false;
  check_flags(args, f, format);
  return true;
}

const std::vector<OptionName>& translate_option_names() {
  using T = OptionName::Type;
  static const std::vector<OptionName> names = {
      {"beam_size", "--beam", T::whole},
      {"num_hypotheses", "--n-best", T::whole},
      {"length_penalty", "--length-penalty", T::real},
      {"max_decoding_length", "--max-len", T::whole},
      {"max_length", "--max-len", T::whole},
      {"min_decoding_length", "--min-len", T::whole},
      {"max_len_a", "--max-len-a", T::real},
      {"max_len_b", "--max-len-b", T::whole},
      {"sampling_topk", "--sampling-topk", T::whole},
      {"sampling_topp", "--sampling-topp", T::real},
      {"sampling_temperature", "--sampling-temperature", T::real},
      {"seed", "--seed", T::whole},
      {"no_repeat_ngram_size", "--no-repeat-ngram", T::whole},
      {"repetition_penalty", "--repetition-penalty", T::real},
      {"alignment_layer", "--alignment-layer", T::whole},
      {"on_long", "--on-long", T::text},
  };
  return names;
}

void check_max_len(int max_len, const Seq2Seq& model, const std::string& dir) {
  const int64_t positions = model.common().max_len;
  check(max_len <= positions, "--max-len ", max_len, " is more than the model's ", positions,
        " positions (max_len in ", dir, "/config.json)");
}

TranslateModels load_translate_models(const TranslateFlags& f) {
  TranslateModels t;
  t.models = load_inference_models(f.models, f.ids, f.precision, t.text);  // jobs point at them
  if (!f.shortlist.empty()) {
    const Seq2SeqCommon c = t.models.front().common();
    t.shortlist.emplace(load_shortlist(f.shortlist, c.src_vocab, c.tgt_vocab));
  }
  return t;
}

TranslateJob make_translate_job(const TranslateFlags& f, const TranslateModels& t) {
  for (size_t i = 0; i < t.models.size(); ++i) check_max_len(f.search.max_len, t.models[i], f.models[i]);
  TranslateJob job;
  job.out = LineOutput{&t.models.front(), t.text ? &t.text->tokenizer : nullptr, f.output};
  const std::vector<double> weights = parse_weights(f.weights, t.models.size(), "--weights");
  if (t.models.size() > 1 || !weights.empty()) {
    std::vector<const Seq2Seq*> pointers;
    for (const Seq2Seq& m : t.models) pointers.push_back(&m);
    job.ensemble = make_ensemble(pointers, weights);
  }
  job.search = f.search;
  job.batch = static_cast<size_t>(f.batch);
  job.batch_tokens = static_cast<size_t>(f.batch_tokens);
  job.on_long = parse_on_long(f.on_long, "--on-long");
  job.input = f.input;
  job.output = f.output_path;
  job.prefix_path = f.prefix;
  job.shortlist = t.shortlist ? &*t.shortlist : nullptr;
  return job;
}

int run_translate(int argc, char** argv) {
  TranslateFlags f;
  if (!parse_translate_flags(argc, argv, f)) return 0;
  if (f.threads > 0) set_threads(f.threads);
  const TranslateModels models = load_translate_models(f);
  TranslateJob job = make_translate_job(f, models);
  job.progress = isatty(fileno(stderr)) != 0;
  return translate_lines(job);
}

}  // namespace attn::cli
