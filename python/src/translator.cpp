// attn.Translator: the library's Translator (translate/translator.h) from Python. The keyword
// arguments are the options of the library's table under CTranslate2's names, set as typed values
// into TranslateOptions and checked by the library, so a translation from Python is the binary's
// (the same windows, batches and numbers), and a bad option fails with the binary's message.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <unistd.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/data/text_file.h"
#include "attn/decode/alignment.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/model_dir.h"
#include "attn/runtime.h"
#include "attn/translate/file.h"
#include "attn/translate/options.h"
#include "attn/translate/score_options.h"
#include "attn/translate/translator.h"
#include "binding.h"

namespace attn::python {
namespace {

// The binary's messages name its flags and point at its --help; Python's are the same (tests
// compare them), so a module user can look the option up in docs/decoding.md under either name.
const char* const kHint = " (see attn translate --help)";

std::string flag_of(const OptionField& f) { return f.flag; }

struct Translator {
  std::unique_ptr<attn::Translator> t;
  bool text = true;  // the model has a tokenizer: text in and out (else ids only)
  int threads = 0;    // threads=N: every call's count, on the thread that computes it (0: the thread's own)

  const attn::Translator* operator->() const { return t.get(); }
  const attn::Translator& operator*() const { return *t; }
};

// One source's result, CTranslate2's TranslationResult with attn's extras (ids, logprobs).
struct Result {
  py::list hypotheses, tokens, ids, scores, logprobs, alignment, attention;
};

// Runs f; an attn::Error it throws becomes a ValueError with the binary's message for a flag.
void as_flag_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const attn::Error& e) {
    throw py::value_error(std::string(e.what()) + kHint);
  }
}

// Sets option f from a Python value: an int, a float or a str, as the field's type takes it.
void set_value(TranslateOptionsBuilder& b, const OptionField& f, const std::string& name, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) throw py::value_error(name + " must be a number, got " + std::string(py::str(value)));
  const std::string shown = py::str(value);
  as_flag_error([&] {
    if (py::isinstance<py::int_>(value)) {
      const py::int_ big(std::numeric_limits<int64_t>::max()), small(std::numeric_limits<int64_t>::min());
      if (value.cast<py::int_>() <= big && value.cast<py::int_>() >= small) b.set_whole(f, value.cast<int64_t>(), shown);
      else b.set(f, shown);  // beyond int64: the range check names it as written
    } else if (py::isinstance<py::float_>(value)) {
      b.set_real(f, value.cast<double>(), shown);
    } else if (py::isinstance<py::str>(value)) {
      b.set(f, shown);
    } else {
      throw py::type_error(name + " must be a number or a string, got " + std::string(py::str(value.get_type().attr("__name__"))));
    }
  });
}

// The options of a call: max_batch_size/batch_type and the keyword arguments, checked.
TranslateOptions options_of(const Translator& t, const py::kwargs& options, int max_batch_size,
                            const std::string& batch_type, const char* function) {
  if (batch_type != "examples" && batch_type != "tokens")
    throw py::value_error("batch_type must be 'examples' or 'tokens', got '" + batch_type + "'");
  TranslateOptionsBuilder b(flag_of);
  const OptionField& batch = translate_option(batch_type == "tokens" ? "batch_tokens" : "max_batch_size");
  as_flag_error([&] { b.set_whole(batch, max_batch_size, std::to_string(max_batch_size)); });
  for (const auto& [key, value] : options) {
    const std::string name = py::str(key);
    const OptionField* f = find_translate_option(name, kPython);
    if (f == nullptr) throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" + name + "'");
    if (value.is_none()) continue;
    set_value(b, *f, name, value);
  }
  TranslateOptions o;
  as_value_error([&] {
    b.defaults_from(t->defaults());
    o = b.finish();
    t->check_options(o, flag_of);
  });
  return o;
}

enum class Kind { text, pieces, ids };

std::string type_name(const py::handle& v) { return py::str(v.get_type().attr("__name__")); }

// A source or prefix (`name`, e.g. "sources[2]"): text, or a list of SentencePiece pieces (their
// ids, unknown pieces as unk) or of ids. bytes are refused, not read as a list of ids (its bytes'
// values): which encoding they hold is the caller's to say (.decode()).
Kind kind_of(const py::handle& item, const std::string& name) {
  if (py::isinstance<py::str>(item)) return Kind::text;
  if (py::isinstance<py::bytes>(item) || py::isinstance<py::bytearray>(item) || !py::isinstance<py::sequence>(item))
    throw py::type_error(name + " must be a str, a list of str (pieces) or a list of int (ids), got " +
                         type_name(item) + (py::isinstance<py::bytes>(item) ? " (decode it: .decode('utf-8'))" : ""));
  const py::sequence l = py::reinterpret_borrow<py::sequence>(item);
  return l.size() > 0 && py::isinstance<py::str>(l[0]) ? Kind::pieces : Kind::ids;
}

// The text of `item` (`name`, its index): one sentence, so a newline inside it is refused as the
// binary would see two lines (a newline became SentencePiece's unknown piece ⁇).
std::string text_of(const py::handle& item, const std::string& name) {
  std::string text = item.cast<std::string>();
  if (text.find('\n') != std::string::npos)
    throw py::value_error(name + " holds a newline: each entry is one sentence (one line of attn translate's input)");
  return text;
}

// `target`: pieces are the target vocabulary's (a target prefix), else the source's.
std::vector<int32_t> ids_of(const Translator& t, const py::handle& item, Kind kind, const std::string& name,
                            bool target = false) {
  std::vector<int32_t> ids;
  size_t j = 0;
  for (const py::handle& x : item) {
    const std::string at = name + "[" + std::to_string(j++) + "]";
    const bool id = py::isinstance<py::int_>(x) && !py::isinstance<py::bool_>(x);
    if (kind == Kind::ids && !id) throw py::type_error(at + " must be an int (a token id), got " + type_name(x));
    if (kind == Kind::pieces && !py::isinstance<py::str>(x)) throw py::type_error(at + " must be a str (a piece), got " + type_name(x));
    if (kind == Kind::pieces) {
      ids.push_back((target ? t->target_tokenizer() : t->source_tokenizer()).piece_to_id(x.cast<std::string>()));
      continue;
    }
    const py::int_ v = py::reinterpret_borrow<py::int_>(x);
    if (v > py::int_(std::numeric_limits<int32_t>::max()) || v < py::int_(std::numeric_limits<int32_t>::min()))
      throw py::value_error(at + " is not a token id of this model, got " + std::string(py::str(x)));
    ids.push_back(x.cast<int32_t>());
  }
  return ids;
}

// The lines of `sources` (and their target prefixes) as the translator reads a file called
// "sources" (or "target_prefix"): line N is sources[N - 1].
std::vector<SourceLine> read_sources(const Translator& t, const TranslateOptions& o, const py::list& sources,
                                     const py::object& prefixes) {
  if (!prefixes.is_none())
    check(py::len(prefixes) == sources.size(), "target_prefix has ", py::len(prefixes), " entries for ", sources.size(),
          " sources: one per source");
  const Seq2SeqCommon config = t->config();
  std::vector<SourceLine> lines;
  for (size_t i = 0; i < sources.size(); ++i) {
    const int64_t number = static_cast<int64_t>(i) + 1;
    const std::string where = "sources:" + std::to_string(number), name = "sources[" + std::to_string(i) + "]";
    const Kind kind = kind_of(sources[i], name);
    if (kind == Kind::text) {
      std::string text = text_of(sources[i], name);
      data::clean_stream_line(text, number, "sources");
      lines.push_back(t->text_line(text, number, where, o.on_long));
    } else {
      std::vector<int32_t> ids = ids_of(t, sources[i], kind, name);
      if (kind == Kind::pieces) ids.push_back(config.eos_id);  // as the tokenizer's text gets it
      lines.push_back(t->ids_line(std::move(ids), number, where, o.on_long));
    }
    const std::string warning = long_line_warning(lines.back(), where, config.max_len);
    if (!warning.empty()) std::fprintf(stderr, "warning: %s\n", warning.c_str());
    if (prefixes.is_none() || py::len(prefixes) == 0) continue;
    const py::handle p = prefixes.cast<py::list>()[i];
    if (p.is_none()) continue;
    const std::string pname = "target_prefix[" + std::to_string(i) + "]";
    const Kind pk = kind_of(p, pname);
    const std::string pwhere = "target_prefix:" + std::to_string(number);
    lines.back().prefix = pk == Kind::text ? t->text_prefix(text_of(p, pname), pwhere, lines.back())
                                           : t->ids_prefix(ids_of(t, p, pk, pname, true), pwhere, lines.back());
  }
  return lines;
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

Result make_result(const TranslationResult& tr, const Returns& r) {
  Result out;
  for (const TranslationHypothesis& h : tr.hypotheses) {
    if (r.kind == Kind::text) out.hypotheses.append(h.text);
    else if (r.kind == Kind::pieces) out.hypotheses.append(h.tokens);
    else out.hypotheses.append(h.ids);
    out.tokens.append(h.tokens);
    out.ids.append(h.ids);
    if (r.scores) {
      out.scores.append(h.score);
      out.logprobs.append(h.logprob);
    }
    if (tr.whole && r.alignment) out.alignment.append(links_array(h.alignment));
    if (tr.whole && r.attention) out.attention.append(matrix_array(h.alignment));
  }
  return out;
}

// Every line searched window by window (Translator::search_all) with the GIL released at the
// translator's thread count; between windows Python may take a signal (the GIL taken back), so
// Ctrl-C raises KeyboardInterrupt after the window in progress instead of after the whole call.
std::vector<TranslationResult> translate_windows(const Translator& t, const std::vector<SourceLine>& lines,
                                                 const TranslateOptions& o) {
  py::gil_scoped_release release;  // the models are read only: other threads may search them too
  const CallThreads threads(t.threads);
  const std::vector<std::vector<Hypothesis>> hyps = t->search_all(lines, o, between_calls);
  std::vector<TranslationResult> out;
  out.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) out.push_back(t->result(lines[i], hyps[i], o, t.text));
  return out;
}

std::vector<Result> translate_batch(const Translator& t, const py::list& sources, const py::object& target_prefix,
                                    int max_batch_size, const std::string& batch_type, bool return_scores,
                                    bool return_alignment, bool return_attention, const py::kwargs& options) {
  TranslateOptions o = options_of(t, options, max_batch_size, batch_type, "translate_batch");
  o.all_hypotheses = true;  // every hypothesis searched, as CTranslate2 returns num_hypotheses
  if (return_alignment || return_attention) o.alignment = AlignmentKind::hard;
  std::vector<SourceLine> lines;
  as_value_error([&] { lines = read_sources(t, o, sources, target_prefix); });
  const std::vector<TranslationResult> results = translate_windows(t, lines, o);
  const Returns r{sources.size() ? kind_of(sources[0], "sources[0]") : Kind::text, return_scores, return_alignment,
                  return_attention};
  std::vector<Result> out;
  for (const TranslationResult& tr : results) out.push_back(make_result(tr, r));
  return out;
}

void translate_file(const Translator& t, const std::string& input, const std::string& output, py::object progress,
                    int max_batch_size, const std::string& batch_type, const py::kwargs& options) {
  const TranslateOptions o = options_of(t, options, max_batch_size, batch_type, "translate_file");
  TranslateFile file;
  file.text = t.text;
  file.input = input;
  file.output = output;
  file.progress = progress.is_none() ? isatty(fileno(stderr)) != 0 : progress.cast<bool>();
  file.between = between_calls;
  with_paths({input}, [&] {
    py::gil_scoped_release release;
    const CallThreads threads(t.threads);
    attn::translate_file(*t, o, file);
  });
}

// Each line of a list: text (str) through the tokenizer, or ids (list of int) as given; the kind
// is the first line's, and a line of another kind is a TypeError naming it.
std::vector<std::vector<int32_t>> score_lines(const Translator& t, const py::list& lines, const std::string& name,
                                              int32_t eos) {
  int64_t max_len = t->config().max_len;  // positions every model of an ensemble has
  for (const Seq2Seq& m : t->models()) max_len = std::min(max_len, m.common().max_len);
  const bool text = lines.size() == 0 || py::isinstance<py::str>(lines[0]);
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string at = name + "[" + std::to_string(i) + "]";
    const Kind kind = kind_of(lines[i], at);
    if (text && kind != Kind::text) throw py::type_error(at + " must be a str as " + name + "[0] is, got " + type_name(lines[i]));
    if (text) texts.push_back(text_of(lines[i], at));
    else if (kind == Kind::text) throw py::type_error(at + " must be a list of int (ids) as " + name + "[0] is, got str");
    else ids.push_back(ids_of(t, lines[i], Kind::ids, at));
  }
  // the sources get the eos and are the source vocabulary's; the targets the target's
  return text ? encode_score_lines(texts, name, eos >= 0 ? t->source_tokenizer() : t->target_tokenizer(), eos, max_len)
              : ids;
}

// max_batch_size is the library's table of scoring options (translate/score_options.h), named by
// attn score's flag in messages, as the translation options are.
std::vector<double> score_batch(const Translator& t, const py::list& sources, const py::list& targets,
                                int64_t max_batch_size) {
  if (sources.size() != targets.size())
    throw py::value_error("line counts differ: sources has " + std::to_string(sources.size()) + " lines, targets has " +
                          std::to_string(targets.size()));
  ScoreOptionsBuilder b([](const ScoreOptionField& f) { return f.flag; });
  try {
    b.set_whole(score_option("max_batch_size"), max_batch_size, std::to_string(max_batch_size));
  } catch (const attn::Error& e) {
    throw py::value_error(std::string(e.what()) + " (see attn score --help)");
  }
  const auto src = score_lines(t, sources, "sources", t->config().eos_id);
  const auto tgt = score_lines(t, targets, "targets", -1);
  py::gil_scoped_release release;
  const CallThreads threads(t.threads);
  return t->score(src, tgt, static_cast<int>(b.options().batch), between_calls);
}

std::unique_ptr<Translator> make_translator(const py::object& model_dir, const py::object& precision,
                                            const py::object& threads, const py::object& ensemble_weights,
                                            const py::object& shortlist) {
  auto t = std::make_unique<Translator>();
  TranslatorOptions o;
  if (py::isinstance<py::str>(model_dir) || !py::isinstance<py::sequence>(model_dir)) o.models = {py::str(model_dir)};
  else for (const py::handle& d : model_dir) o.models.push_back(py::str(d));
  // The library refuses an empty list too, but the tokenizer check below reads the first entry first.
  if (o.models.empty()) throw py::value_error("model_dir: a translator needs at least one model directory, got an empty list");
  if (!threads.is_none())
    as_flag_error([&] { t->threads = static_cast<int>(parse_whole("--threads", py::str(threads), 1, kMaxThreads)); });
  if (!precision.is_none())
    as_flag_error([&] { o.precision = parse_precision(precision.cast<std::string>(), "--precision"); });
  if (!shortlist.is_none()) o.shortlist = py::str(shortlist);
  if (!ensemble_weights.is_none())
    as_value_error([&] { o.weights = parse_weights(ensemble_weights.cast<std::string>(), o.models.size(), "--weights"); });
  try {  // a model without a tokenizer (attn import-torch's) reads and writes ids only, as with --ids
    t->text = read_json_file(o.models.front() + "/config.json").contains("tokenizer");
  } catch (const attn::Error&) {  // loading says what is wrong with the directory, as the binary does
  }
  o.vocabulary = t->text ? Vocabulary::text : Vocabulary::ids;
  with_paths(o.models, [&] {
    py::gil_scoped_release release;
    const CallThreads count(t->threads);
    t->t = std::make_unique<attn::Translator>(o);
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
      .def_property_readonly("model_dirs", [](const Translator& t) { return t->dirs(); })
      .def("translate_batch", &translate_batch, py::arg("sources"), py::arg("target_prefix") = py::none(),
           py::arg("max_batch_size") = 32, py::arg("batch_type") = "examples", py::arg("return_scores") = false,
           py::arg("return_alignment") = false, py::arg("return_attention") = false)
      .def("translate_file", &translate_file, py::arg("input_path"), py::arg("output_path"),
           py::arg("progress") = py::none(), py::arg("max_batch_size") = 32, py::arg("batch_type") = "examples")
      .def("score_batch", &score_batch, py::arg("sources"), py::arg("targets"),
           py::arg(score_option("max_batch_size").key.c_str()) = score_option("max_batch_size").default_value());
}

}  // namespace attn::python
