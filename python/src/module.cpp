// The extension attn._attn: the classes of the other files, and attn.Error. python/attn/__init__.py
// re-exports them as the package attn.
#include <filesystem>

#include "attn/error.h"
#include "attn/runtime.h"
#include "binding.h"

namespace attn::python {

void as_value_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const attn::Error& e) {
    throw py::value_error(e.what());
  }
}

void with_paths(const std::vector<std::string>& paths, const std::function<void()>& f) {
  try {
    f();
  } catch (const attn::Error& e) {
    for (const std::string& p : paths) {
      std::error_code ec;
      if (!p.empty() && !std::filesystem::exists(p, ec)) {
        PyErr_SetString(PyExc_FileNotFoundError, e.what());
        throw py::error_already_set();
      }
    }
    throw;
  }
}

CallThreads::CallThreads(int n) {
  if (n <= 0) return;
  before_ = threads();
  set_threads(n);
}

CallThreads::~CallThreads() {
  if (before_ > 0) set_threads(before_);
}

void check_signals() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

void between_calls() {
  py::gil_scoped_acquire gil;
  check_signals();
}

}  // namespace attn::python

PYBIND11_MODULE(_attn, m) {
  namespace py = pybind11;
  m.doc() = "attn: the Transformer of 'Attention Is All You Need' (translation, classification, training)";
  // attn.Error: what the binary reports as "error: ..." and exits non-zero for.
  static py::exception<attn::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const attn::Error& e) {
      error(e.what());
    }
  });
  attn::python::bind_translator(m);
  attn::python::bind_classifier(m);
  attn::python::bind_weights(m);
  attn::python::bind_training(m);
}
