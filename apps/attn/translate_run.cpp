#include "translate_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "attn/data/text_file.h"
#include "attn/decode/batch.h"
#include "attn/decode/id_lines.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"

namespace attn::cli {
namespace {


// The encoder's ids a line's alignment is read against: its one piece. A line translated in
// pieces has no alignment over the whole (each piece attended to its own source); it gets none,
// with a warning, rather than one that would mislead.
std::vector<int32_t> source_of(const Line& line, const OutputOptions& options) {
  if (line.pieces.size() == 1) return line.pieces.front();
  if (line.pieces.size() > 1 && !options.alignment.empty())
    std::fprintf(stderr, "warning: line %lld: translated in %zu pieces: no alignment printed for it\n",
                 static_cast<long long>(line.number), line.pieces.size());
  return {};
}

// Where the output goes: standard output as each window ends, or --output at the end.
struct Sink {
  std::string path;       // empty: standard output
  std::string collected;  // for path
  void put(const std::string& text) {
    if (path.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      collected += text;
    }
  }
};

// One batch of sources: a model, or the ensemble.
std::vector<std::vector<Hypothesis>> search_batch(const TranslateJob& job, const std::vector<std::vector<int32_t>>& sources,
                                                  const SentenceInputs& inputs) {
  if (job.ensemble.empty()) return search(*job.out.model, sources, job.search, inputs);
  return search(job.ensemble, sources, job.search, inputs);
}

// --shortlist: each sentence may output its own list (with eos and its prefix: a forced token must
// be computable), its log-probs a softmax over it.
void restrict_to_shortlist(const Shortlist& list, const Seq2SeqCommon& c, const std::vector<std::vector<int32_t>>& sources,
                           SentenceInputs& inputs) {
  for (size_t i = 0; i < sources.size(); ++i)
    inputs.allowed.push_back(shortlist_vocabulary(list, {sources[i]}, {inputs.prefixes[i], {c.eos_id}}, c.tgt_vocab));
}

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
void translate_window(const TranslateJob& job, const std::vector<Line>& window, Sink& sink, CutOff& cut_off) {
  const std::vector<std::vector<Hypothesis>> hyps = translate_sources(job, window);
  for (size_t i = 0; i < window.size(); ++i) {
    sink.put(format_line(job.out, window[i].number, source_of(window[i], job.out.options), hyps[i]));
    if (!hyps[i].empty() && !hyps[i].front().finished) cut_off.add(window[i].number);
  }
  std::fflush(stdout);
}

}  // namespace

// Input line `number` as the pieces to translate, with a warning when it had to be cut.
Line read_line(std::string& text, int64_t number, const std::string& name, const Seq2SeqCommon& config,
               OnLong on_long, const data::Tokenizer* tokenizer) {
  const std::string where = name + ":" + std::to_string(number);
  data::clean_stream_line(text, number, name);
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
  return Line{number, std::move(f.pieces), {}};
}

std::vector<int32_t> prefix_ids(const std::string& text, const std::string& where, const Line& line,
                                const Seq2SeqCommon& config, const data::Tokenizer* tokenizer) {
  std::vector<int32_t> ids = tokenizer ? tokenizer->encode(text) : parse_ids(text, config.tgt_vocab, where);
  for (int32_t id : ids)
    check(id != config.eos_id, where, ": the prefix holds eos (", config.eos_id, "); a prefix is the output's start");
  check(static_cast<int64_t>(ids.size()) < config.max_len, where, ": a prefix of ", ids.size(),
        " tokens leaves no room in the model's ", config.max_len, " positions");
  check(ids.empty() || !line.pieces.empty(), where, ": a prefix for the blank input line ", line.number);
  return ids;
}

uint64_t sampling_key(int64_t number, size_t piece) {
  return (static_cast<uint64_t>(number - 1) << 20) | piece;
}

bool window_full(const TranslateJob& job, size_t lines, size_t tokens) {
  constexpr size_t kBatchesPerWindow = 8;
  return job.batch_tokens > 0 ? tokens >= job.batch_tokens * kBatchesPerWindow : lines >= job.batch * kBatchesPerWindow;
}

std::vector<std::vector<Hypothesis>> translate_sources(const TranslateJob& job, const std::vector<Line>& window) {
  std::vector<std::pair<size_t, size_t>> where;  // (line, piece) of each source
  std::vector<size_t> lengths;
  for (size_t i = 0; i < window.size(); ++i)
    for (size_t j = 0; j < window[i].pieces.size(); ++j) {
      where.emplace_back(i, j);
      lengths.push_back(window[i].pieces[j].size());
    }
  std::vector<std::vector<std::vector<Hypothesis>>> parts(window.size());
  for (size_t i = 0; i < window.size(); ++i) parts[i].resize(window[i].pieces.size());
  const auto groups = job.batch_tokens > 0 ? token_sorted_batches(lengths, job.batch_tokens)
                                           : length_sorted_batches(lengths, job.batch);
  for (const auto& group : groups) {
    std::vector<std::vector<int32_t>> sources;
    SentenceInputs inputs;
    for (size_t k : group) {
      const auto [line, piece] = where[k];
      sources.push_back(window[line].pieces[piece]);
      inputs.prefixes.push_back(piece == 0 ? window[line].prefix : std::vector<int32_t>{});
      inputs.keys.push_back(sampling_key(window[line].number, piece));
    }
    if (job.shortlist) restrict_to_shortlist(*job.shortlist, job.out.model->common(), sources, inputs);
    std::vector<std::vector<Hypothesis>> out = search_batch(job, sources, inputs);
    for (size_t j = 0; j < group.size(); ++j) parts[where[group[j]].first][where[group[j]].second] = std::move(out[j]);
  }
  std::vector<std::vector<Hypothesis>> out(window.size());
  for (size_t i = 0; i < window.size(); ++i)
    if (!parts[i].empty()) out[i] = join_pieces(parts[i]);
  return out;
}

namespace {

// The --prefix file, read a line per input line.
struct PrefixReader {
  std::string path;
  std::ifstream in;
  int64_t lines = 0;

  // The target prefix of input line `line` (text through the tokenizer, or ids).
  std::vector<int32_t> next(const Line& line, const Seq2SeqCommon& config, const data::Tokenizer* tokenizer) {
    std::string text;
    check(static_cast<bool>(std::getline(in, text)), "--prefix ", path, " has ", lines,
          " lines, but the input has more (line ", line.number, "): one prefix line per input line");
    ++lines;
    const std::string where = path + ":" + std::to_string(lines);
    data::clean_stream_line(text, lines, path);
    return prefix_ids(text, where, line, config, tokenizer);
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

}  // namespace

int translate_lines(const TranslateJob& job) {
  const Seq2SeqCommon config = job.out.model->common();
  std::unique_ptr<std::ifstream> file;
  if (!job.input.empty()) {
    file = std::make_unique<std::ifstream>(job.input);
    check(file->good(), "--input: cannot open '", job.input, "'");
  }
  std::istream& in = file ? *file : std::cin;
  const std::string name = job.input.empty() ? "<stdin>" : job.input;
  std::unique_ptr<PrefixReader> prefixes;
  if (!job.prefix_path.empty()) {
    prefixes = std::make_unique<PrefixReader>();
    prefixes->path = job.prefix_path;
    prefixes->in.open(job.prefix_path);
    check(prefixes->in.good(), "--prefix: cannot open '", job.prefix_path, "'");
  }
  Progress progress;
  progress.on = job.progress;
  if (progress.on && file) progress.total = count_lines(job.input);
  Sink sink{job.output, {}};
  CutOff cut_off;
  std::vector<Line> window;
  size_t window_tokens = 0;
  auto full = [&] { return window_full(job, window.size(), window_tokens); };
  std::string text;
  int64_t number = 1;
  for (; std::getline(in, text); ++number) {
    window.push_back(read_line(text, number, name, config, job.on_long, job.out.tokenizer));
    if (prefixes) window.back().prefix = prefixes->next(window.back(), config, job.out.tokenizer);
    for (const auto& piece : window.back().pieces) window_tokens += piece.size();
    if (!full()) continue;
    translate_window(job, window, sink, cut_off);
    progress.show(number, false);
    window.clear();
    window_tokens = 0;
  }
  if (!window.empty()) translate_window(job, window, sink, cut_off);
  if (prefixes) prefixes->finish();
  progress.show(number - 1, true);
  if (!job.output.empty()) io::write_file_atomic(job.output, sink.collected);
  cut_off.report(number - 1);
  return 0;
}

}  // namespace attn::cli
