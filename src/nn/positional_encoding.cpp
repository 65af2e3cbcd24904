#include "attn/nn/positional_encoding.h"

#include <cmath>

namespace attn {

Tensor sinusoid_table(int64_t max_len, int64_t d_model, bool halves) {
  Tensor pe = Tensor::zeros({max_len, d_model});
  float* p = pe.data<float>();
  // halves: sin of angle i at column i, cos at column sin_columns + i (an odd d_model gives
  // the sins one column more, as Hugging Face's MarianSinusoidalPositionalEmbedding does)
  const int64_t sin_columns = (d_model + 1) / 2;
  for (int64_t pos = 0; pos < max_len; ++pos)
    for (int64_t i2 = 0; i2 < d_model; i2 += 2) {
      double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(i2) / d_model);
      const int64_t s = halves ? i2 / 2 : i2, c = halves ? sin_columns + i2 / 2 : i2 + 1;
      p[pos * d_model + s] = static_cast<float>(std::sin(angle));
      if (i2 + 1 < d_model) p[pos * d_model + c] = static_cast<float>(std::cos(angle));
    }
  return pe;
}

}  // namespace attn
