// attn.Classifier: the library's classification (classify/classify.h) from Python: the model
// loaded at attn classify's precision, the same labels and messages.
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/classifier_dir.h"
#include "attn/runtime.h"
#include "binding.h"
#include "attn/classify/classify.h"
#include "attn/classify/options.h"
#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/translate/translator.h"

namespace attn::python {
namespace {

struct Classifier {
  std::string dir;
  ClassifierModel model;
  int threads = 0;  // threads=N: every call's count, on the thread that computes it (binding.h, CallThreads)
};

std::unique_ptr<Classifier> make_classifier(const std::string& model_dir, const py::object& precision,
                                            const py::object& threads) {
  auto c = std::make_unique<Classifier>();
  c->dir = model_dir;
  const std::string name = precision.is_none() ? "" : precision.cast<std::string>();
  if (!threads.is_none()) {
    const int n = threads.cast<int>();
    as_value_error([&] { check(n >= 1 && n <= kMaxThreads, "threads must be between 1 and ", kMaxThreads, ", got ", n); });
    c->threads = n;
  }
  with_paths({model_dir}, [&] {
    py::gil_scoped_release release;
    const CallThreads count(c->threads);
    c->model = load_classifier(model_dir);
  });
  Precision p = Precision::fp32;
  as_value_error([&] { p = model_precision(name.empty() ? std::nullopt : std::optional<Precision>(parse_precision(name, "--precision")), model_dir); });
  py::gil_scoped_release release;
  const CallThreads count(c->threads);
  prepare(c->model.model, p, Use::inference);  // weights converted once, as attn classify does
  return c;
}


// Per text its top_k (label, probability), most probable first; [] for a blank text. top_k and
// max_batch_size are the library's table of classification options (classify/options.h), named
// by attn classify's flags in messages, as attn.Translator's are (a test compares them).
std::vector<std::vector<std::pair<std::string, float>>> classify_batch(const Classifier& c,
                                                                       const std::vector<std::string>& texts,
                                                                       int64_t top_k, int64_t max_batch_size) {
  ClassifyOptionsBuilder b([](const ClassifyOptionField& f) { return f.flag; });
  as_value_error([&] {
    try {
      b.set_whole(classify_option("top_k"), top_k, std::to_string(top_k));
      b.set_whole(classify_option("max_batch_size"), max_batch_size, std::to_string(max_batch_size));
    } catch (const Error& e) {
      fail(e.what(), " (see attn classify --help)");
    }
  });
  std::vector<std::vector<std::pair<std::string, float>>> out;
  py::gil_scoped_release release;
  const CallThreads count(c.threads);
  const auto tops = classify_texts(c.model, texts, b.options(), between_calls);
  for (const auto& top : tops) {
    out.emplace_back();
    for (const auto& [label, p] : top) out.back().emplace_back(c.model.labels[static_cast<size_t>(label)], p);
  }
  return out;
}

}  // namespace

void bind_classifier(py::module_& m) {
  py::class_<Classifier>(m, "Classifier")
      .def(py::init(&make_classifier), py::arg("model_dir"), py::arg("precision") = py::none(),
           py::arg("threads") = py::none())
      .def_property_readonly("labels", [](const Classifier& c) { return c.model.labels; })
      // The keywords' names and defaults are the table's (ClassifyOptions{}'s values).
      .def("classify_batch", &classify_batch, py::arg("texts"), py::arg(classify_option("top_k").key.c_str()) =
           classify_option("top_k").default_value(), py::arg(classify_option("max_batch_size").key.c_str()) =
           classify_option("max_batch_size").default_value());
}

}  // namespace attn::python
