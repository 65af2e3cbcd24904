// Fresh initialisation of parameters: the rules the models share. A model lists its parameters as
// ParamSpecs (checkpoint key, shape, rule) and draws each in that order from one seeded Rng.
#pragma once

#include <string>

#include "attn/tensor/random.h"
#include "attn/tensor/tensor.h"

namespace attn {

enum class Init {
  xavier,   // U(-a, a), a = sqrt(6 / (fan_in + fan_out)), shape [fan_out, fan_in] (Glorot and Bengio 2010)
  uniform,  // U(-scale, scale): PyTorch's nn.Linear (scale 1/sqrt(fan_in)), nn.LSTM and nn.GRU (1/sqrt(H))
  normal,   // N(0, scale^2): embeddings
  zeros,
  ones,
};

struct ParamSpec {
  std::string key;
  Shape shape;
  Init init;
  float scale = 0.0f;  // uniform: the bound; normal: the standard deviation
};

// A fresh tensor for `spec`; zeros and ones draw nothing from `rng`.
Tensor init_parameter(const ParamSpec& spec, Rng& rng);

}  // namespace attn
