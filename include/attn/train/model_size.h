// model.size: a ladder of pre-LN Transformer sizes, and the rule `attn train` applies when no size
// is given (model.size auto, the default). The rule's unit is the step of the reference size
// (small, the recipe's): the trainer measures how many of those the machine makes per second of
// train.clock over the run's first steps, multiplies by the budget left, and picks the size whose
// band holds that count. A machine 3x faster, or a budget 3x longer, has 3x the reference steps:
// the same rule serves both. docs/translation.md ("Model size for the budget") has the runs the
// bands come from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/models/transformer_config.h"

namespace attn {

struct ModelSize {
  std::string name;
  int64_t d_model = 0, heads = 0, layers = 0, d_ff = 0;  // layers: N of the encoder and of the decoder
  // The rule picks this size when the budget holds fewer reference steps than this (and at least
  // the previous size's bound); the largest size's bound is infinite.
  double below_reference_steps = 0;
};

// tiny, small (the reference), medium, base (the paper's base model), smallest first.
const std::vector<ModelSize>& model_sizes();
const ModelSize& reference_size();
// The size named `name`; an error names `what` and the sizes there are.
const ModelSize& model_size(std::string_view name, std::string_view what = "model.size");

// The size the rule picks for a budget of `reference_steps` steps of the reference size.
const ModelSize& size_for_budget(double reference_steps);

// The size's dimensions written into a configuration (its other fields unchanged).
void apply_size(const ModelSize& size, TransformerConfig& config);

// The five dimensions a size sets, each with its configuration key ("model.d_model", ...): what a
// given key overrides, and what a resumed run takes from the size it started with.
struct SizeDimension {
  const char* key;
  int64_t TransformerConfig::*field;
};
const std::vector<SizeDimension>& size_dimensions();

// "small (d_model 256, 3+3 layers, 4 heads, d_ff 1024)".
std::string describe(const ModelSize& size);

}  // namespace attn
