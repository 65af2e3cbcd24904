#include "attn/models/stored_precision.h"

#include <cstdint>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/io/safetensors.h"

namespace attn {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

const char* const kScale = ".scale";

}  // namespace

bool is_linear_weight(const std::string& name) {
  for (const char* tail : {"in_proj_weight", "out_proj.weight", "linear1.weight", "linear2.weight"})
    if (ends_with(name, tail)) return true;
  for (const char* whole : {"generator.weight", "fc.weight", "bridge_h.weight", "bridge_c.weight", "readout.weight",
                            "attention.U.weight"})
    if (name == whole) return true;
  return false;
}

std::map<std::string, Tensor> to_stored_precision(const std::map<std::string, Tensor>& tensors, Precision p,
                                                  int qmax) {
  check(p != Precision::fp32, "to_stored_precision: fp32 is the precision a model is stored in already");
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : tensors) {
    if (!is_linear_weight(name) || t.dim() != 2 || t.dtype() != DType::f32) {
      out[name] = t;
      continue;
    }
    const Tensor w = t.contiguous();
    const int64_t rows = w.size(0), cols = w.size(1);
    if (p == Precision::bf16) {
      Tensor b = Tensor::empty(w.shape(), DType::bf16);
      round_to_bf16(w.data<float>(), b.data<uint16_t>(), w.numel());
      out[name] = b;
      continue;
    }
    Tensor q = Tensor::empty(w.shape(), DType::i8), s = Tensor::empty({rows});
    quantize_rows_s8(w.data<float>(), rows, cols, cols, q.data<int8_t>(), s.data<float>(), qmax);
    out[name] = q;
    out[name + kScale] = s;
  }
  return out;
}

void from_stored_precision(std::map<std::string, Tensor>& tensors, const std::string& source) {
  for (auto& [name, t] : tensors) {
    if (t.dtype() == DType::bf16) {
      Tensor f = Tensor::empty(t.shape());
      bf16_to_f32(t.contiguous().data<uint16_t>(), f.data<float>(), t.numel());
      t = f;
    } else if (t.dtype() == DType::i8) {
      auto it = tensors.find(name + kScale);
      check(t.dim() == 2, source, ": I8 tensor '", name, "' must be 2-D [out, in], got ", shape_str(t.shape()));
      check(it != tensors.end(), source, ": I8 tensor '", name, "' has no '", name, kScale, "'");
      const Tensor& s = it->second;
      check(s.dtype() == DType::f32 && s.dim() == 1 && s.size(0) == t.size(0), source, ": '", name, kScale,
            "' must be F32 [", t.size(0), "], got ", dtype_name(s.dtype()), " ", shape_str(s.shape()));
      const Tensor q = t.contiguous();
      Tensor f = Tensor::empty(t.shape());
      const int64_t rows = q.size(0), cols = q.size(1);
      const int8_t* qd = q.data<int8_t>();
      const float* sd = s.data<float>();
      float* fd = f.data<float>();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) fd[r * cols + c] = static_cast<float>(qd[r * cols + c]) * sd[r];
      t = f;
    }
  }
  for (auto it = tensors.begin(); it != tensors.end();) {  // the scales are folded in
    const bool scale = ends_with(it->first, kScale) && tensors.count(it->first.substr(0, it->first.size() - 6));
    it = scale ? tensors.erase(it) : std::next(it);
  }
}

std::map<std::string, Tensor> load_model_weights(const std::string& path) {
  std::map<std::string, Tensor> tensors = io::load_safetensors_copied(path);
  from_stored_precision(tensors, path);
  return tensors;
}

Precision stored_precision(const nlohmann::json& config, const std::string& source) {
  if (!config.contains("precision")) return Precision::fp32;
  check(config["precision"].is_string(), source, ": key 'precision' must be a string (fp32, bf16 or int8)");
  return parse_precision(config["precision"].get<std::string>(), source + ": key 'precision'");
}

}  // namespace attn
