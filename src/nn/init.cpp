#include "attn/nn/init.h"

#include <cmath>

#include "attn/error.h"

namespace attn {

Tensor init_parameter(const ParamSpec& s, Rng& rng) {
  Tensor t = Tensor::empty(s.shape);
  switch (s.init) {
    case Init::xavier: {
      check(s.shape.size() == 2, s.key, ": xavier initialisation needs a matrix");
      // a = sqrt(6 / (fan_in + fan_out))
      float a = std::sqrt(6.0f / static_cast<float>(s.shape[0] + s.shape[1]));
      fill_uniform(t, -a, a, rng);
      break;
    }
    case Init::uniform: fill_uniform(t, -s.scale, s.scale, rng); break;
    case Init::normal: fill_normal(t, 0.0f, s.scale, rng); break;
    case Init::zeros: t.zero(); break;
    case Init::ones: t.fill(1.0f); break;
  }
  return t;
}

}  // namespace attn
