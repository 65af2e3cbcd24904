#include "attn/train/model_size.h"

#include <limits>

#include "attn/error.h"

namespace attn {

const std::vector<ModelSize>& model_sizes() {
  // Each size costs about 2.5x the one before per target token (weights and output layer counted
  // at the shipped task's 8,000 pieces). The bands: docs/translation.md, "Model size for the budget".
  static const std::vector<ModelSize> sizes = {
      {"tiny", 128, 4, 2, 512, 2500},
      {"small", 256, 4, 3, 1024, 7000},
      {"medium", 384, 6, 4, 1536, 25000},
      {"base", 512, 8, 6, 2048, std::numeric_limits<double>::infinity()},
  };
  return sizes;
}

const ModelSize& reference_size() { return model_size("small"); }

const ModelSize& model_size(std::string_view name, std::string_view what) {
  std::string known;
  for (const ModelSize& s : model_sizes()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  fail(std::string(what), ": unknown size '", std::string(name), "' (auto, ", known, ")");
}

const ModelSize& size_for_budget(double reference_steps) {
  for (const ModelSize& s : model_sizes())
    if (reference_steps < s.below_reference_steps) return s;
  return model_sizes().back();
}

void apply_size(const ModelSize& size, TransformerConfig& config) {
  config.d_model = size.d_model;
  config.heads = size.heads;
  config.encoder_layers = config.decoder_layers = size.layers;
  config.d_ff = size.d_ff;
}

std::string describe(const ModelSize& s) {
  return s.name + " (d_model " + std::to_string(s.d_model) + ", " + std::to_string(s.layers) + "+" +
         std::to_string(s.layers) + " layers, " + std::to_string(s.heads) + " heads, d_ff " + std::to_string(s.d_ff) +
         ")";
}

}  // namespace attn
