// attn translate: greedy or beam search over standard input, one sentence a line.
//   attn translate --model M --ids [--beam 4] [--length-penalty 0.6] [--max-len N] [--batch 32]
//                  [--n-best 1] [--threads N] [--precision fp32|bf16|int8]  < source.ids > output.ids
//                  [--alignment hard|soft [--alignment-layer L] [--alignment-words]] [--output-format text|jsonl]
// Lines are read in windows of several batches; within a window sentences are sorted by length
// into batches (less padding), and the window's output is written in input order. Every input
// line gives its output line: a blank one an empty line, one longer than the model's positions
// its pieces' translations joined (--on-long, decode/long_lines.h).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "attn/data/text_file.h"
#include "attn/decode/batch.h"
#include "attn/decode/id_lines.h"
#include "attn/decode/long_lines.h"
#include "attn/decode/search.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/runtime.h"
#include "translate_output.h"

namespace attn::cli {
namespace {

constexpr size_t kBatchesPerWindow = 8;

struct Line {
  int64_t number;  // 1-based, for messages
  std::vector<std::vector<int32_t>> pieces;  // the source, in pieces that fit the model; none: blank
};

// The encoder's ids a line's alignment is read against: its one piece. A line translated in
// pieces has no alignment over the whole (each piece attended to its own source); it gets none,
// with a warning, rather than one that would mislead.
std::vector<int32_t> source_of(const Line& line, const OutputOptions& options) {
  if (line.pieces.size() == 1) return line.pieces.front();
  if (line.pieces.size() > 1 && !options.alignment.empty())
    std::fprintf(stderr, "warning: <stdin>:%lld: translated in %zu pieces: no alignment printed for it\n",
                 static_cast<long long>(line.number), line.pieces.size());
  return {};
}

// Translates a window of lines and prints them in input order. Blank lines give empty output.
void translate_window(const LineOutput& out, const std::vector<Line>& window, const SearchOptions& o,
                      size_t batch) {
  const Seq2Seq& m = *out.model;
  std::vector<std::pair<size_t, size_t>> where;  // (line, piece) of each source
  std::vector<size_t> lengths;
  for (size_t i = 0; i < window.size(); ++i)
    for (size_t j = 0; j < window[i].pieces.size(); ++j) {
      where.emplace_back(i, j);
      lengths.push_back(window[i].pieces[j].size());
    }
  std::vector<std::vector<std::vector<Hypothesis>>> parts(window.size());
  for (size_t i = 0; i < window.size(); ++i) parts[i].resize(window[i].pieces.size());
  for (const auto& group : length_sorted_batches(lengths, batch)) {
    std::vector<std::vector<int32_t>> sources;
    for (size_t k : group) sources.push_back(window[where[k].first].pieces[where[k].second]);
    std::vector<std::vector<Hypothesis>> out = search(m, sources, o);
    for (size_t j = 0; j < group.size(); ++j) parts[where[group[j]].first][where[group[j]].second] = std::move(out[j]);
  }
  for (size_t i = 0; i < window.size(); ++i)
    std::fputs(format_line(out, window[i].number, source_of(window[i], out.options),
                           parts[i].empty() ? std::vector<Hypothesis>{} : join_pieces(parts[i]))
                   .c_str(),
               stdout);
  std::fflush(stdout);
}

// The command line of attn translate.
struct TranslateFlags {
  std::string model, precision, on_long = "split";
  bool ids = false;
  int threads = 0, batch = 32;  // threads 0: all cores
  SearchOptions search;
  OutputOptions output;
};

// --alignment [hard|soft], --alignment-layer, --alignment-words, --output-format text|jsonl.
void add_output_flags(CLI::App& args, OutputOptions& out, std::string& format) {
  args.add_option("--alignment", out.alignment,
                  "after each translation, ' ||| ' and the word alignment from the encoder-decoder attention "
                  "(heads averaged): hard (default) 'source-target' index pairs, or soft (the rows of weights)")
      ->expected(0, 1);
  add_int(args, "--alignment-layer", out.alignment_layer, 0, 1 << 16,
          "the decoder layer alignments are read from, 1-based (0: the second-to-last)");
  args.add_flag("--alignment-words", out.alignment_words,
                "align whitespace words instead of SentencePiece pieces");
  args.add_option("--output-format", format,
                  "text, or jsonl: one JSON object a line (text, tokens, ids, score, logprob; n_best with --n-best; "
                  "alignment and source_tokens with --alignment)");
}

// Returns false when --help was asked for.
bool parse_flags(int argc, char** argv, TranslateFlags& f) {
  CLI::App args{"Translates standard input to standard output, one sentence a line, with greedy\n"
                "(--beam 1) or beam search. Text is tokenised with the model's SentencePiece model (eos\n"
                "appended) and the output detokenised. With --ids, lines are space-separated token ids, fed to the\n"
                "encoder exactly as given (add eos yourself if the model expects it); the output is the\n"
                "ids without eos. A blank line (empty or only spaces) gives an empty line; a line longer than the\n"
                "model's positions is split (--on-long). Input is UTF-8; a '\\r' before the newline is dropped.",
                "attn translate"};
  describe(args, "attn translate --model runs/ende --beam 4 < news.en > news.de");
  SearchOptions& o = f.search;
  add_model(args, f.model, "model directory (config.json + model.safetensors)");
  args.add_flag("--ids", f.ids, "read and write token ids instead of text");
  add_beam(args, o.beam);
  add_real(args, "--length-penalty", o.length_penalty, 0, 100, "alpha of the GNMT length penalty ((5+len)/6)^alpha");
  add_int(args, "--max-len", o.max_len, 0, 1 << 24, "most tokens generated, eos included (0: source length + 50)");
  add_batch(args, f.batch, "sentences decoded together");
  CLI::Option* n_best = add_int(args, "--n-best", o.n_best, 1, 1024,
                                "print the N best as 'i ||| ids ||| score' lines (i from 0; score: log-prob over the "
                                "length penalty)");
  add_threads(args, f.threads, "all cores");
  add_precision(args, f.precision);
  args.add_option("--on-long", f.on_long,
                  "a source longer than the model's positions: split (default: translated in pieces that fit, "
                  "their outputs joined on its line; nothing is lost), truncate (its first positions), or "
                  "error (stop); split and truncate warn with the line number")
      ->check(CLI::IsMember({"split", "truncate", "error"}));
  std::string format = "text";
  add_output_flags(args, f.output, format);
  if (!parse(args, argc, argv)) return false;
  check(o.n_best <= o.beam, "--n-best must be between 1 and --beam (", o.beam, "), got ", o.n_best);
  f.output.n_best = n_best->count() > 0;
  check(format == "text" || format == "jsonl", "--output-format must be text or jsonl, got '", format, "'");
  f.output.jsonl = format == "jsonl";
  OutputOptions& out = f.output;
  if (args.count("--alignment") > 0 && out.alignment.empty()) out.alignment = "hard";
  check(out.alignment.empty() || out.alignment == "hard" || out.alignment == "soft",
        "--alignment must be hard or soft, got '", out.alignment, "'");
  check(out.alignment.size() || (out.alignment_layer == 0 && !out.alignment_words),
        "--alignment-layer and --alignment-words need --alignment");
  check(!(out.alignment_words && f.ids), "--alignment-words needs text (SentencePiece pieces), not --ids");
  return true;
}

// Input line `number` as the pieces to translate, with a warning when it had to be cut.
Line read_line(std::string& text, int64_t number, const Seq2SeqCommon& config, OnLong on_long,
               const data::Tokenizer* tokenizer) {
  const std::string where = "<stdin>:" + std::to_string(number);
  data::clean_stream_line(text, number, "<stdin>");
  const size_t positions = static_cast<size_t>(config.max_len);
  FittedSource f;
  if (tokenizer == nullptr) {
    f = fit_ids(parse_ids(text, config.src_vocab, where), positions, on_long, where);
    bool all_pad = !f.pieces.empty();
    for (const auto& piece : f.pieces)
      for (int32_t id : piece) all_pad = all_pad && id == config.pad_id;
    check(!all_pad, where, ": every id is the padding id ", config.pad_id, ", nothing to translate");
  } else if (!data::is_blank(text)) {
    f = fit_text(*tokenizer, text, config.eos_id, positions, on_long, where);
  }
  if (f.pieces.size() > 1)
    std::fprintf(stderr, "warning: %s: %zu tokens, more than the model's %zu positions: translated in %zu pieces, "
                 "joined on its output line (--on-long split)\n", where.c_str(), f.tokens, positions, f.pieces.size());
  if (f.truncated)
    std::fprintf(stderr, "warning: %s: %zu tokens, more than the model's %zu positions: truncated to them "
                 "(--on-long truncate)\n", where.c_str(), f.tokens, positions);
  return Line{number, std::move(f.pieces)};
}

}  // namespace

int run_translate(int argc, char** argv) {
  TranslateFlags f;
  if (!parse_flags(argc, argv, f)) return 0;
  if (f.threads > 0) set_threads(f.threads);
  const SearchOptions& o = f.search;
  const std::string& model = f.model;
  const int batch = f.batch;
  const bool ids_mode = f.ids;
  std::optional<TranslationModel> text_model;
  if (!ids_mode) text_model.emplace(load_translation_model(model));
  Seq2Seq m = ids_mode ? load_seq2seq(model) : text_model->model;  // either family
  const Seq2SeqCommon config = m.common();
  check(o.max_len <= config.max_len, "--max-len ", o.max_len, " is more than the model's ",
        config.max_len, " positions (max_len in ", model, "/config.json)");
  prepare(m, model_precision(f.precision, f.model), Use::inference);  // weights converted once
  const OnLong on_long = parse_on_long(f.on_long, "--on-long");
  const LineOutput out{&m, ids_mode ? nullptr : &text_model->tokenizer, f.output};
  size_t window_size = static_cast<size_t>(batch) * kBatchesPerWindow;
  std::vector<Line> window;
  std::string text;
  for (int64_t number = 1; std::getline(std::cin, text); ++number) {
    window.push_back(read_line(text, number, config, on_long, out.tokenizer));
    if (window.size() == window_size) {
      translate_window(out, window, o, static_cast<size_t>(batch));
      window.clear();
    }
  }
  if (!window.empty()) translate_window(out, window, o, static_cast<size_t>(batch));
  return 0;
}

}  // namespace attn::cli
