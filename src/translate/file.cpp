#include "attn/translate/file.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "attn/data/text_file.h"
#include "attn/decode/id_lines.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"

namespace attn {
namespace {

// Where the output goes: standard output as each window ends, or --output at the end.
struct Sink {
  std::string path;       // empty: standard output
  std::string collected;  // for path
  void put(const std::string& text) {
    if (path.empty()) std::fputs(text.c_str(), stdout);
    else collected += text;
  }
};

// The input lines whose output stopped at the maximum length before its end (eos): cut off, and
// from a weak model usually a piece repeated to the limit. Reported once, at the end.
struct CutOff {
  int64_t count = 0;
  std::vector<int64_t> first;  // the first few line numbers, for the message

  void add(int64_t number) {
    if (count++ < 10) first.push_back(number);
  }
  void report(int64_t lines) const {
    if (count == 0) return;
    std::string numbers;
    for (int64_t n : first) numbers += (numbers.empty() ? "" : ", ") + std::to_string(n);
    std::fprintf(stderr,
                 "warning: %lld of %lld outputs stopped at the maximum length without ending (line%s %s%s): "
                 "the model repeats itself there, or --max-len is too short\n",
                 static_cast<long long>(count), static_cast<long long>(lines), count == 1 ? "" : "s",
                 numbers.c_str(), count > static_cast<int64_t>(first.size()) ? ", ..." : "");
  }
};

// Translates a window of lines and prints them in input order. Blank lines give empty output.
void translate_window(const Translator& t, const TranslateOptions& o, const TranslateFile& run,
                      const std::vector<SourceLine>& window, Sink& sink, CutOff& cut_off) {
  const std::vector<std::vector<Hypothesis>> hyps = t.search(window, o);
  for (size_t i = 0; i < window.size(); ++i) {
    // A line translated in pieces has no alignment over the whole (each piece attended to its own
    // source): it gets none, with a warning, rather than one that would mislead.
    if (window[i].pieces.size() > 1 && o.alignment != AlignmentKind::none)
      std::fprintf(stderr, "warning: line %lld: translated in %zu pieces: no alignment printed for it\n",
                   static_cast<long long>(window[i].number), window[i].pieces.size());
    const TranslationResult r = t.result(window[i], hyps[i], o, run.text);
    sink.put(run.jsonl ? result_json(r, o).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                       : result_text(r, o));
    if (!hyps[i].empty() && !hyps[i].front().finished) cut_off.add(window[i].number);
  }
  std::fflush(stdout);
}

// The --prefix file, read a line per input line.
struct PrefixReader {
  std::string path;
  std::ifstream in;
  int64_t lines = 0;

  // The target prefix of input line `line` (text through the tokenizer, or ids).
  std::vector<int32_t> next(const Translator& t, const SourceLine& line, bool text) {
    std::string prefix;
    check(static_cast<bool>(std::getline(in, prefix)), "--prefix ", path, " has ", lines,
          " lines, but the input has more (line ", line.number, "): one prefix line per input line");
    ++lines;
    const std::string where = path + ":" + std::to_string(lines);
    data::clean_stream_line(prefix, lines, path);
    return text ? t.text_prefix(prefix, where, line)
                : t.ids_prefix(parse_ids(prefix, t.config().tgt_vocab, where), where, line);
  }
  // After the last input line: the file must hold no more lines.
  void finish() {
    std::string text;
    check(!std::getline(in, text), "--prefix ", path, " has more lines than the input (", lines,
          "): one prefix line per input line");
  }
};

// Lines done, rate and (when the total is known) time left, on one self-overwriting stderr line.
struct Progress {
  bool on = false;
  int64_t total = 0;  // 0: unknown (standard input)
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  void show(int64_t done, bool last) const {
    if (!on) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    std::fprintf(stderr, "\rtranslated %lld", static_cast<long long>(done));
    if (total > 0) std::fprintf(stderr, " of %lld", static_cast<long long>(total));
    std::fprintf(stderr, " lines, %.1f lines/s", rate);
    if (total > 0 && rate > 0) std::fprintf(stderr, ", ETA %.0f s", static_cast<double>(total - done) / rate);
    std::fprintf(stderr, last ? "\n" : "   ");
  }
};

int64_t count_lines(const std::string& path) {
  std::ifstream in(path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Input line `number` of `name` as the pieces to translate, with a warning when it had to be cut.
SourceLine read_line(const Translator& t, const TranslateOptions& o, bool text, std::string& line, int64_t number,
                     const std::string& name) {
  const std::string where = name + ":" + std::to_string(number);
  data::clean_stream_line(line, number, name);
  SourceLine s = text ? t.text_line(line, number, where, o.on_long)
                      : t.ids_line(parse_ids(line, t.config().src_vocab, where), number, where, o.on_long);
  const std::string warning = long_line_warning(s, where, t.config().max_len);
  if (!warning.empty()) std::fprintf(stderr, "warning: %s\n", warning.c_str());
  return s;
}

}  // namespace

int translate_file(const Translator& t, const TranslateOptions& o, const TranslateFile& run) {
  std::unique_ptr<std::ifstream> file;
  if (!run.input.empty()) {
    data::check_not_directory(run.input, "--input");
    file = std::make_unique<std::ifstream>(run.input);
    check(file->good(), "--input: cannot open '", run.input, "'");
  }
  if (!file) data::check_stdin_not_directory();
  std::istream& in = file ? *file : std::cin;
  const std::string name = run.input.empty() ? "<stdin>" : run.input;
  std::unique_ptr<PrefixReader> prefixes;
  if (!run.prefix_path.empty()) {
    prefixes = std::make_unique<PrefixReader>();
    prefixes->path = run.prefix_path;
    data::check_not_directory(run.prefix_path, "--prefix");
    prefixes->in.open(run.prefix_path);
    check(prefixes->in.good(), "--prefix: cannot open '", run.prefix_path, "'");
  }
  Progress progress;
  progress.on = run.progress;
  if (progress.on && file) progress.total = count_lines(run.input);
  Sink sink{run.output, {}};
  CutOff cut_off;
  std::vector<SourceLine> window;
  size_t window_tokens = 0;
  std::string text;
  int64_t number = 1;
  for (; std::getline(in, text); ++number) {
    if (window.empty() && number > 1 && run.between) run.between();  // after a window, before the next
    window.push_back(read_line(t, o, run.text, text, number, name));
    if (prefixes) window.back().prefix = prefixes->next(t, window.back(), run.text);
    for (const auto& piece : window.back().pieces) window_tokens += piece.size();
    if (!Translator::window_full(o, window.size(), window_tokens)) continue;
    translate_window(t, o, run, window, sink, cut_off);
    progress.show(number, false);
    window.clear();
    window_tokens = 0;
  }
  if (!window.empty()) translate_window(t, o, run, window, sink, cut_off);
  if (prefixes) prefixes->finish();
  progress.show(number - 1, true);
  if (!run.output.empty()) io::write_file_atomic(run.output, sink.collected);
  cut_off.report(number - 1);
  return 0;
}

}  // namespace attn
