// attn.load_model(dir).weights() and attn.save_model(dir, config, weights): a translation model's
// parameters as numpy arrays that view the model's own memory (no copy: each array's base holds
// the tensor's storage alive), read-only unless asked, and a model directory written from arrays.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/models/model_dir.h"
#include "attn/models/seq2seq.h"
#include "binding.h"

namespace attn::python {
namespace {

struct Model {
  std::string dir;
  Seq2Seq model;
};

// A Python object from JSON (through the json module: numbers, strings, lists and dicts alike).
py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }
nlohmann::json from_python(const py::object& o) {
  return nlohmann::json::parse(py::module_::import("json").attr("dumps")(o).cast<std::string>());
}

// The tensor as an array over its memory: its base a capsule holding a handle on the storage.
py::array view_of(const Tensor& t, bool writable) {
  check(t.dtype() == DType::f32, "weights(): tensor of dtype ", dtype_name(t.dtype()), " (f32 expected)");
  std::vector<py::ssize_t> shape, strides;
  for (size_t d = 0; d < t.shape().size(); ++d) {
    shape.push_back(static_cast<py::ssize_t>(t.shape()[d]));
    strides.push_back(static_cast<py::ssize_t>(t.strides()[d] * sizeof(float)));
  }
  auto* handle = new Tensor(t);
  py::capsule base(handle, [](void* p) { delete static_cast<Tensor*>(p); });
  py::array a(py::dtype::of<float>(), shape, strides, t.data<float>(), base);
  if (!writable) py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

py::dict weights(const Model& m, bool writable) {
  py::dict out;
  for (const auto& [key, var] : m.model.parameters()) out[py::str(key)] = view_of(var.value(), writable);
  return out;
}

std::unique_ptr<Model> load_model(const std::string& dir) {
  auto m = std::make_unique<Model>();
  m->dir = dir;
  with_paths({dir}, [&] {
    py::gil_scoped_release release;
    m->model = load_seq2seq(dir);
  });
  return m;
}

// The model directory `dir` from a config (config.json's keys: the model's, and any others such as
// "tokenizer", kept) and arrays by checkpoint key, copied into the model and checked as a loaded file is.
void save_model(const std::string& dir, const py::dict& config, const py::dict& arrays) {
  const nlohmann::json j = from_python(config);
  std::map<std::string, Tensor> tensors;
  for (const auto& [key, value] : arrays) {
    const auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
    if (!a) throw py::value_error("save_model: weights['" + std::string(py::str(key)) + "'] is not an array of numbers");
    Shape shape(a.shape(), a.shape() + a.ndim());
    Tensor t = Tensor::empty(shape);
    std::copy(a.data(), a.data() + a.size(), t.data<float>());
    tensors.emplace(py::str(key), std::move(t));
  }
  as_value_error([&] {
    Seq2Seq m = seq2seq_from_tensors(seq2seq_config_from_json(j, "config"), std::move(tensors), "weights");
    nlohmann::json extra = j;  // the keys the model's config does not write, e.g. "tokenizer"
    const nlohmann::json own = seq2seq_config_to_json(m.config());
    for (const auto& [key, value] : own.items()) extra.erase(key);
    save_seq2seq(m, dir, extra);
  });
}

}  // namespace

void bind_weights(py::module_& m) {
  py::class_<Model>(m, "Model")
      .def_readonly("model_dir", &Model::dir)
      .def_property_readonly("config", [](const Model& x) { return to_python(read_json_file(x.dir + "/config.json")); })
      .def("weights", &weights, py::arg("writable") = false);
  m.def("load_model", &load_model, py::arg("model_dir"));
  m.def("save_model", &save_model, py::arg("model_dir"), py::arg("config"), py::arg("weights"));
}

}  // namespace attn::python
