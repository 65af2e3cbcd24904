#include "attn/nn/positional_encoding.h"

#include <cmath>

namespace attn {

Tensor sinusoid_table(int64_t max_len, int64_t d_model) {
  Tensor pe = Tensor::zeros({max_len, d_model});
  float* p = pe.data<float>();
  for (int64_t pos = 0; pos < max_len; ++pos)
    for (int64_t i2 = 0; i2 < d_model; i2 += 2) {
      double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i2) / d_model);
      p[pos * d_model + i2] = static_cast<float>(std::sin(angle));
      if (i2 + 1 < d_model) p[pos * d_model + i2 + 1] = static_cast<float>(std::cos(angle));
    }
  return pe;
}

}  // namespace attn
