#include "attn/train/model_size.h"

#include <limits>

#include "attn/error.h"

namespace attn {

const std::vector<ModelSize>& model_sizes() {
  // Each size costs about 2-3x the one before per step (measured on a Zen 5 in bf16: tiny 2.6-3.1x
  // small's steps a CPU second, medium 0.46x). The bands: docs/translation.md, "Model size for the
  // budget": tiny's edge is where tiny and small cross on dev BLEU; medium's and base's are not
  // measured (medium lost to small by 11-13 BLEU at 4,564 and 9,260 reference steps).
  static const std::vector<ModelSize> sizes = {
      {"tiny", 128, 4, 2, 512, 3700},
      {"small", 256, 4, 3, 1024, 25000},
      {"medium", 384, 6, 4, 1536, 100000},
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

const std::vector<SizeDimension>& size_dimensions() {
  static const std::vector<SizeDimension> dimensions = {
      {"model.d_model", &TransformerConfig::d_model},
      {"model.heads", &TransformerConfig::heads},
      {"model.encoder_layers", &TransformerConfig::encoder_layers},
      {"model.decoder_layers", &TransformerConfig::decoder_layers},
      {"model.d_ff", &TransformerConfig::d_ff},
  };
  return dimensions;
}

std::string describe(const ModelSize& s) {
  return s.name + " (d_model " + std::to_string(s.d_model) + ", " + std::to_string(s.layers) + "+" +
         std::to_string(s.layers) + " layers, " + std::to_string(s.heads) + " heads, d_ff " + std::to_string(s.d_ff) +
         ")";
}

}  // namespace attn
