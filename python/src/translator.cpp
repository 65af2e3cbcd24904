// attn.Translator: attn translate and attn score from Python. The keyword arguments go through
// translate's own command-line parser (apps/attn/translate.cpp) under CTranslate2's names, lines
// are read, cut, batched in windows and searched by the binary's functions (translate_run.h), so a
// translation from Python is the binary's, and a bad option fails with the binary's message.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/decode/alignment.h"
#include "attn/decode/id_lines.h"
#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "attn/runtime.h"
#include "args.h"
#include "binding.h"
#include "score.h"
#include "translate_flags.h"

namespace attn::python {
namespace {

struct Translator {
  std::vector<std::string> dirs;
  std::string precision, weights;  // as --precision ("" the model's own) and --weights
  bool ids = false;                 // no tokenizer in config.json
  cli::TranslateModels models;

  const Seq2SeqCommon config() const { return models.models.front().common(); }
  // A model without a tokenizer (attn import-torch's) reads and writes ids only, as with --ids.
  const data::Tokenizer& tokenizer() const {
    check(models.text.has_value(), dirs.front(), "/config.json: no \"tokenizer\" entry: give token ids, not text");
    return models.text->tokenizer;
  }
};

// One source's result, CTranslate2's TranslationResult with attn's extras (ids, logprobs).
struct Result {
  py::list hypotheses, tokens, ids, scores, logprobs, alignment, attention;
};

// The command line of translate for these options, parsed and checked.
cli::TranslateFlags parse_options(const Translator& t, const py::kwargs& options, const std::vector<std::string>& extra,
                                  const char* function) {
  Argv argv{{"attn translate"}};
  for (const std::string& d : t.dirs) argv.args.insert(argv.args.end(), {"--model", d});
  if (t.ids) argv.args.push_back("--ids");
  if (!t.precision.empty()) argv.args.insert(argv.args.end(), {"--precision", t.precision});
  if (!t.weights.empty()) argv.args.insert(argv.args.end(), {"--weights", t.weights});
  for (const auto& [key, value] : options) {
    const std::string name = py::str(key);
    const auto& names = cli::translate_option_names();
    auto it = names.begin();
    while (it != names.end() && it->name != name) ++it;
    if (it == names.end())
      throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" + name + "'");
    if (value.is_none()) continue;
    if (py::isinstance<py::bool_>(value))
      throw py::value_error(name + " must be a number, got " + std::string(py::str(value)));
    argv.args.insert(argv.args.end(), {it->flag, py::str(value)});
  }
  argv.args.insert(argv.args.end(), extra.begin(), extra.end());
  cli::TranslateFlags f;
  std::vector<char*> pointers = argv.pointers();
  as_value_error([&] { cli::parse_translate_flags(static_cast<int>(argv.args.size()), pointers.data(), f); });
  return f;
}

std::vector<std::string> batch_flags(int max_batch_size, const std::string& batch_type) {
  if (batch_type == "examples") return {"--batch", std::to_string(max_batch_size)};
  if (batch_type == "tokens") return {"--batch-tokens", std::to_string(max_batch_size)};
  throw py::value_error("batch_type must be 'examples' or 'tokens', got '" + batch_type + "'");
}

enum class Kind { text, pieces, ids };

// A source or prefix given as a list: ids ("3 17 5", as the binary's --ids reads them) or
// SentencePiece pieces (their ids, unknown pieces as unk).
Kind kind_of(const py::handle& item) {
  if (py::isinstance<py::str>(item)) return Kind::text;
  const py::list l = py::reinterpret_borrow<py::object>(item).cast<py::list>();
  return l.size() > 0 && py::isinstance<py::str>(l[0]) ? Kind::pieces : Kind::ids;
}

std::string ids_text(const Translator& t, const py::handle& item, Kind kind) {
  std::string out;
  for (const py::handle& x : item) {
    const int32_t id = kind == Kind::ids ? x.cast<int32_t>() : t.tokenizer().piece_to_id(x.cast<std::string>());
    out += (out.empty() ? "" : " ") + std::to_string(id);
  }
  return out;
}

// The lines of `sources` (and their target prefixes) as translate reads them from a file called
// "sources" (or "target_prefix"): line N is sources[N - 1].
std::vector<cli::Line> read_sources(const Translator& t, const cli::TranslateJob& job, const py::list& sources,
                                    const py::object& prefixes) {
  if (!prefixes.is_none())
    check(py::len(prefixes) == sources.size(), "target_prefix has ", py::len(prefixes), " entries for ", sources.size(),
          " sources: one per source");
  const Seq2SeqCommon config = t.config();
  std::vector<cli::Line> lines;
  for (size_t i = 0; i < sources.size(); ++i) {
    const int64_t number = static_cast<int64_t>(i) + 1;
    const Kind kind = kind_of(sources[i]);
    std::string text = kind == Kind::text ? sources[i].cast<std::string>() : ids_text(t, sources[i], kind);
    if (kind == Kind::pieces) text += " " + std::to_string(config.eos_id);  // as the tokenizer's text gets it
    lines.push_back(cli::read_line(text, number, "sources", config, job.on_long,
                                   kind == Kind::text ? &t.tokenizer() : nullptr));
    if (prefixes.is_none() || py::len(prefixes) == 0) continue;
    const py::handle p = prefixes.cast<py::list>()[i];
    if (p.is_none()) continue;
    const Kind pk = kind_of(p);
    const std::string where = "target_prefix:" + std::to_string(number);
    lines.back().prefix = pk == Kind::text ? cli::prefix_ids(p.cast<std::string>(), where, lines.back(), config, &t.tokenizer())
                                           : cli::prefix_ids(ids_text(t, p, pk), where, lines.back(), config, nullptr);
  }
  return lines;
}

// Every line's hypotheses, window by window as translate reads a file (so the batches, and with
// them the numbers, are the binary's), and their alignment matrices when asked for.
struct Searched {
  std::vector<std::vector<Hypothesis>> hyps;
  std::vector<std::vector<Matrix>> alignments;  // per line, per hypothesis; none for a line cut in pieces
};

Searched search_lines(const cli::TranslateJob& job, const std::vector<cli::Line>& lines, bool align) {
  Searched s;
  std::vector<cli::Line> window;
  size_t tokens = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    window.push_back(lines[i]);
    for (const auto& piece : lines[i].pieces) tokens += piece.size();
    if (!cli::window_full(job, window.size(), tokens) && i + 1 < lines.size()) continue;
    for (auto& h : cli::translate_sources(job, window)) s.hyps.push_back(std::move(h));
    window.clear();
    tokens = 0;
  }
  s.alignments.resize(lines.size());
  for (size_t i = 0; align && i < lines.size(); ++i)
    if (lines[i].pieces.size() == 1)
      for (const Hypothesis& h : s.hyps[i])
        s.alignments[i].push_back(cli::alignment_matrix_of(job.out, lines[i].pieces.front(), h.tokens));
  return s;
}

py::array_t<float> matrix_array(const Matrix& a) {
  const size_t rows = a.size(), cols = a.empty() ? 0 : a.front().size();
  py::array_t<float> out({rows, cols});
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) out.mutable_at(r, c) = a[r][c];
  return out;
}

py::array_t<int64_t> links_array(const Matrix& a) {
  const auto links = hard_alignment(a);
  py::array_t<int64_t> out({links.size(), size_t{2}});
  for (size_t k = 0; k < links.size(); ++k) {
    out.mutable_at(k, 0) = links[k].first;
    out.mutable_at(k, 1) = links[k].second;
  }
  return out;
}

struct Returns {
  Kind kind;
  bool scores, alignment, attention;
};

Result make_result(const Translator& t, const cli::TranslateJob& job, const std::vector<Hypothesis>& hyps,
                   const std::vector<Matrix>& alignments, const Returns& r) {
  Result out;
  for (size_t k = 0; k < hyps.size(); ++k) {
    const Hypothesis& h = hyps[k];
    const std::vector<std::string> tokens = cli::tokens_of(job.out, h.tokens);
    if (r.kind == Kind::text) out.hypotheses.append(t.tokenizer().decode(h.tokens));
    else if (r.kind == Kind::pieces) out.hypotheses.append(tokens);
    else out.hypotheses.append(h.tokens);
    out.tokens.append(tokens);
    out.ids.append(h.tokens);
    if (r.scores) {
      out.scores.append(h.score);
      out.logprobs.append(h.logprob);
    }
    if (k < alignments.size() && r.alignment) out.alignment.append(links_array(alignments[k]));
    if (k < alignments.size() && r.attention) out.attention.append(matrix_array(alignments[k]));
  }
  return out;
}

std::vector<Result> translate_batch(const Translator& t, const py::list& sources, const py::object& target_prefix,
                                    int max_batch_size, const std::string& batch_type, bool return_scores,
                                    bool return_alignment, bool return_attention, const py::kwargs& options) {
  std::vector<std::string> extra = batch_flags(max_batch_size, batch_type);
  const bool align = return_alignment || return_attention;
  if (align) extra.insert(extra.end(), {"--alignment", "hard"});
  const cli::TranslateFlags f = parse_options(t, options, extra, "translate_batch");
  cli::TranslateJob job;
  as_value_error([&] { job = cli::make_translate_job(f, t.models); });
  std::vector<cli::Line> lines;
  as_value_error([&] { lines = read_sources(t, job, sources, target_prefix); });
  Searched s;
  {
    py::gil_scoped_release release;  // the models are read only: other threads may search them too
    s = search_lines(job, lines, align);
  }
  const Returns r{sources.size() ? kind_of(sources[0]) : Kind::text, return_scores, return_alignment, return_attention};
  std::vector<Result> out;
  for (size_t i = 0; i < lines.size(); ++i) out.push_back(make_result(t, job, s.hyps[i], s.alignments[i], r));
  return out;
}

void translate_file(const Translator& t, const std::string& input, const std::string& output, py::object progress,
                    int max_batch_size, const std::string& batch_type, const py::kwargs& options) {
  std::vector<std::string> extra = batch_flags(max_batch_size, batch_type);
  extra.insert(extra.end(), {"--input", input, "--output", output});
  const cli::TranslateFlags f = parse_options(t, options, extra, "translate_file");
  cli::TranslateJob job;
  as_value_error([&] { job = cli::make_translate_job(f, t.models); });
  job.progress = progress.is_none() ? isatty(fileno(stderr)) != 0 : progress.cast<bool>();
  with_paths({input}, [&] {
    py::gil_scoped_release release;
    cli::translate_lines(job);
  });
}

// Each line of a list: text (str) through the tokenizer, or ids (list of int) as given.
std::vector<std::vector<int32_t>> score_lines(const Translator& t, const py::list& lines, const std::string& name,
                                              int32_t eos) {
  if (lines.size() > 0 && !py::isinstance<py::str>(lines[0])) return lines.cast<std::vector<std::vector<int32_t>>>();
  return cli::encode_score_lines(lines.cast<std::vector<std::string>>(), name, t.tokenizer(), eos);
}

std::vector<double> score_batch(const Translator& t, const py::list& sources, const py::list& targets,
                                int max_batch_size) {
  if (sources.size() != targets.size())
    throw py::value_error("line counts differ: sources has " + std::to_string(sources.size()) + " lines, targets has " +
                          std::to_string(targets.size()));
  if (max_batch_size < 1) throw py::value_error("max_batch_size must be at least 1, got " + std::to_string(max_batch_size));
  const auto src = score_lines(t, sources, "sources", t.config().eos_id);
  const auto tgt = score_lines(t, targets, "targets", -1);
  std::vector<const Seq2Seq*> pointers;
  for (const Seq2Seq& m : t.models.models) pointers.push_back(&m);
  const std::vector<EnsembleMember> members =
      make_ensemble(pointers, cli::parse_weights(t.weights, pointers.size(), "--weights"));
  const bool alone = t.weights.empty() && pointers.size() == 1;
  py::gil_scoped_release release;
  return cli::score_pairs(t.models.models.front(), members, alone, src, tgt, max_batch_size);
}

std::unique_ptr<Translator> make_translator(const py::object& model_dir, const py::object& precision,
                                            const py::object& threads, const py::object& ensemble_weights,
                                            const py::object& shortlist) {
  auto t = std::make_unique<Translator>();
  if (py::isinstance<py::str>(model_dir) || !py::isinstance<py::sequence>(model_dir)) t->dirs = {py::str(model_dir)};
  else for (const py::handle& d : model_dir) t->dirs.push_back(py::str(d));
  t->precision = precision.is_none() ? "" : precision.cast<std::string>();
  t->weights = ensemble_weights.is_none() ? "" : ensemble_weights.cast<std::string>();
  try {
    t->ids = !read_json_file(t->dirs.front() + "/config.json").contains("tokenizer");
  } catch (const attn::Error&) {  // loading says what is wrong with the directory, as the binary does
  }
  std::vector<std::string> extra;
  if (!threads.is_none()) extra = {"--threads", py::str(threads)};
  // Loaded once with the models (translate's --shortlist), then used by every translation.
  if (!shortlist.is_none()) extra.insert(extra.end(), {"--shortlist", py::str(shortlist)});
  const cli::TranslateFlags f = parse_options(*t, py::kwargs(), extra, "Translator");
  with_paths(t->dirs, [&] {
    py::gil_scoped_release release;
    if (f.threads > 0) set_threads(f.threads);
    t->models = cli::load_translate_models(f);
  });
  return t;
}

}  // namespace

void bind_translator(py::module_& m) {
  py::class_<Result>(m, "TranslationResult")
      .def_readonly("hypotheses", &Result::hypotheses)
      .def_readonly("tokens", &Result::tokens)
      .def_readonly("ids", &Result::ids)
      .def_readonly("scores", &Result::scores)
      .def_readonly("logprobs", &Result::logprobs)
      .def_readonly("alignment", &Result::alignment)
      .def_readonly("attention", &Result::attention)
      .def("__repr__", [](const Result& r) { return "TranslationResult(hypotheses=" + std::string(py::repr(r.hypotheses)) + ")"; });
  py::class_<Translator>(m, "Translator")
      .def(py::init(&make_translator), py::arg("model_dir"), py::arg("precision") = py::none(),
           py::arg("threads") = py::none(), py::arg("ensemble_weights") = py::none(),
           py::arg("shortlist") = py::none())
      .def_property_readonly("model_dirs", [](const Translator& t) { return t.dirs; })
      .def("translate_batch", &translate_batch, py::arg("sources"), py::arg("target_prefix") = py::none(),
           py::arg("max_batch_size") = 32, py::arg("batch_type") = "examples", py::arg("return_scores") = false,
           py::arg("return_alignment") = false, py::arg("return_attention") = false)
      .def("translate_file", &translate_file, py::arg("input_path"), py::arg("output_path"),
           py::arg("progress") = py::none(), py::arg("max_batch_size") = 32, py::arg("batch_type") = "examples")
      .def("score_batch", &score_batch, py::arg("sources"), py::arg("targets"), py::arg("max_batch_size") = 32);
}

}  // namespace attn::python
